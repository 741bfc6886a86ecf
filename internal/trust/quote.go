package trust

import (
	"strconv"
	"strings"
	"unicode"
)

// Quote returns path fit to print on a terminal or in a log line. File and
// folder names come from whoever wrote the repository, so a name with
// control characters, invalid UTF-8 or spaces is printed as a Go quoted
// string (escape sequences cannot reach the terminal); a plain one is
// printed as is.
func Quote(path string) string {
	if plain(path) {
		return path
	}
	return strconv.Quote(path)
}

// ShellArg returns path as one argument a user can paste into a POSIX
// shell: as is when plain, else in single quotes. A path with characters
// that cannot be shown safely is shown as Quote does and with $ and `
// escaped, so that pasting it runs nothing (though it may not name the
// folder).
func ShellArg(path string) string {
	if plain(path) {
		return path
	}
	printable := true
	for _, r := range path {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			printable = false
			break
		}
	}
	if printable {
		return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
	}
	return strings.NewReplacer("$", `\$`, "`", "\\`").Replace(strconv.Quote(path))
}

// plain reports whether s needs no quoting: letters, digits and / . _ - + , : @ =.
func plain(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("/._-+,:@=", c) >= 0:
		default:
			return false
		}
	}
	return true
}
