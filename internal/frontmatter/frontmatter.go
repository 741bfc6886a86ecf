// Package frontmatter splits a Markdown file with YAML front matter (agent
// files, Agent Skills' SKILL.md, custom commands) into the YAML between
// its leading "---" lines and the body: one rule for every such file.
package frontmatter

import (
	"bytes"
	"fmt"
	"strings"
)

// Split separates the YAML between the leading "---" lines from the body
// (trimmed). A byte-order mark and CRLF line ends are accepted. ok is false
// when src does not open with front matter or it is never closed.
func Split(src []byte) (front []byte, body string, ok bool) {
	src = bytes.TrimPrefix(src, []byte("\ufeff"))
	text := strings.ReplaceAll(string(src), "\r\n", "\n")
	first, rest, _ := strings.Cut(text, "\n")
	if strings.TrimRight(first, " \t") != "---" {
		return nil, "", false
	}
	var fm strings.Builder
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if strings.TrimRight(line, " \t") == "---" {
			return []byte(fm.String()), strings.TrimSpace(rest), true
		}
		fm.WriteString(line)
		fm.WriteByte('\n')
	}
	return nil, "", false
}

// Hint is what a front matter that YAML refused most likely needs, said
// to the user after the refusal: an unquoted value holding ": " (as in
// `description: Use when: ...`) is the common slip. It names the line's
// number only, never its text (the file is someone else's). "" when no
// line looks like that.
func Hint(front []byte) string {
	for i, line := range strings.Split(string(front), "\n") {
		key, val, ok := strings.Cut(line, ":")
		val = strings.TrimSpace(val)
		if !ok || strings.ContainsAny(key, " \t#") || val == "" || strings.ContainsAny(val[:1], `"'|>[{`) {
			continue
		}
		if strings.Contains(val, ": ") || strings.HasSuffix(val, ":") {
			return fmt.Sprintf(" (line %d: a value holding \": \" needs quotes)", i+2) // the file's line: the front matter starts after "---"
		}
	}
	return ""
}

// ValidName reports whether s matches ^[A-Za-z0-9][A-Za-z0-9._-]*$: the
// rule for the name of an agent file or a custom command, which becomes
// part of paths, tool schemas and what the user types after /. It is a
// loop rather than a package-level regexp because compiling one at
// start-up costs every reins command, `reins version` included.
func ValidName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return s != ""
}
