package gitsafe

import (
	"errors"
	"strings"
)

// entry is one variable of a git config file.
type entry struct {
	section, sub, key, value string
	// bare is a key with no `=` (a boolean true).
	bare bool
}

// name is the variable's name as the report says it: section.key, or
// section.*.key when it has a subsection, whose text is the file's and is
// never shown. section and key are validated by parseConfig (letters,
// digits, '-' and '.').
func (e entry) name() string {
	if e.sub != "" {
		return e.section + ".*." + e.key
	}
	return e.section + "." + e.key
}

// errSyntax is a config file parseConfig cannot read. Git may read more
// forms than it does; what it cannot read is dropped whole, never guessed.
var errSyntax = errors.New("gitsafe: config syntax")

// parseConfig reads git's config format: sections `[name]`, `[name
// "sub"]` and the older `[name.sub]`, variables `key = value` or a bare
// `key`, values with double quotes, the escapes \n \t \b \\ \", comments
// after # or ; outside quotes, and a backslash at the end of a line
// continuing the value. Section and key names are lowercased (git ignores
// their case); a subsection keeps its case.
func parseConfig(text string) ([]entry, error) {
	var out []entry
	section, sub := "", ""
	s := text
	for len(s) > 0 {
		s = strings.TrimLeft(s, " \t\r\n")
		if s == "" {
			break
		}
		switch s[0] {
		case '#', ';':
			_, s, _ = strings.Cut(s, "\n")
			continue
		case '[':
			end := strings.IndexAny(s, "]\n")
			if end < 0 || s[end] != ']' {
				return nil, errSyntax
			}
			hdr := s[1:end]
			s = s[end+1:]
			var err error
			if section, sub, err = parseHeader(hdr); err != nil {
				return nil, err
			}
			continue
		}
		if section == "" {
			return nil, errSyntax
		}
		i := 0
		for i < len(s) && (isAlnum(s[i]) || s[i] == '-') {
			i++
		}
		if i == 0 || !isAlpha(s[0]) {
			return nil, errSyntax
		}
		e := entry{section: section, sub: sub, key: strings.ToLower(s[:i])}
		s = s[i:]
		s = strings.TrimLeft(s, " \t")
		if s == "" || s[0] == '\n' || s[0] == '#' || s[0] == ';' || strings.HasPrefix(s, "\r\n") {
			e.bare = true
			_, s, _ = strings.Cut(s, "\n")
			out = append(out, e)
			continue
		}
		if s[0] != '=' {
			return nil, errSyntax
		}
		v, rest, err := parseValue(s[1:])
		if err != nil {
			return nil, err
		}
		e.value, s = v, rest
		out = append(out, e)
	}
	return out, nil
}

// parseHeader reads the inside of a section header.
func parseHeader(h string) (section, sub string, err error) {
	name, rest, quoted := strings.Cut(h, " ")
	if !quoted {
		// [section] or [section.sub]: the older form lowercases sub.
		name, sub, _ = strings.Cut(h, ".")
		sub = strings.ToLower(sub)
	} else {
		rest = strings.TrimLeft(rest, " \t")
		if len(rest) < 2 || rest[0] != '"' || rest[len(rest)-1] != '"' {
			return "", "", errSyntax
		}
		var b strings.Builder
		for i := 1; i < len(rest)-1; i++ {
			c := rest[i]
			if c == '\\' && i+1 < len(rest)-1 {
				i++
				c = rest[i]
			} else if c == '"' || c == '\\' {
				return "", "", errSyntax
			}
			b.WriteByte(c)
		}
		sub = b.String()
		if sub == "" {
			return "", "", errSyntax
		}
	}
	if name == "" {
		return "", "", errSyntax
	}
	for i := 0; i < len(name); i++ {
		if !isAlnum(name[i]) && name[i] != '-' && name[i] != '.' {
			return "", "", errSyntax
		}
	}
	return strings.ToLower(name), sub, nil
}

// parseValue reads a value up to its end of line and returns the rest.
func parseValue(s string) (value, rest string, err error) {
	var b strings.Builder
	quoted := false
	pending := "" // blanks kept only if more of the value follows them
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\n' || (c == '\r' && i+1 < len(s) && s[i+1] == '\n'):
			if quoted {
				return "", "", errSyntax
			}
			return b.String(), s[i+1:], nil
		case c == '\\':
			if i+1 >= len(s) {
				return "", "", errSyntax
			}
			i++
			b.WriteString(pending)
			pending = ""
			switch s[i] {
			case '\n':
				// a continued line
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				b.WriteByte('\b')
			case '\\', '"':
				b.WriteByte(s[i])
			default:
				return "", "", errSyntax
			}
		case c == '"':
			b.WriteString(pending)
			pending = ""
			quoted = !quoted
		case !quoted && (c == '#' || c == ';'):
			_, rest, _ := strings.Cut(s[i:], "\n")
			return b.String(), rest, nil
		case !quoted && (c == ' ' || c == '\t'):
			if b.Len() > 0 {
				pending += string(c)
			}
		case c == 0:
			return "", "", errSyntax
		default:
			b.WriteString(pending)
			pending = ""
			b.WriteByte(c)
		}
	}
	if quoted {
		return "", "", errSyntax
	}
	return b.String(), "", nil
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' }

// allowed is the allowlist of a repository a confined process created:
// the variables `git init`, `git clone` and `git remote add` write and the
// identity a commit needs. Nothing here names a program, a path git reads
// more config or code from, or another work tree: core.fsmonitor,
// core.hooksPath, core.sshCommand, core.pager, core.editor,
// core.worktree, include.*, includeIf.*, filter.*, diff.*, merge.*,
// credential.*, gpg.*, alias.*, extensions.worktreeConfig and every other
// variable are dropped.
// (A switch, not a map: a package-level map is built at every start of
// reins; internal/importrules.)
func allowed(name string) bool {
	switch name {
	case "core.repositoryformatversion",
		"core.filemode",
		"core.bare",
		"core.logallrefupdates",
		"core.ignorecase",
		"core.precomposeunicode",
		"core.symlinks",
		"extensions.objectformat",
		"init.defaultbranch",
		"user.name",
		"user.email",
		"remote.*.url",
		"remote.*.pushurl",
		"remote.*.fetch",
		"branch.*.remote",
		"branch.*.merge":
		return true
	}
	return false
}

// keep reports whether e stays in a created repository's config.
func keep(e entry) bool {
	if !allowed(e.name()) {
		return false
	}
	if strings.ContainsAny(e.sub, "\n\x00") || strings.ContainsAny(e.value, "\n\x00") {
		return false
	}
	switch e.name() {
	case "remote.*.url", "remote.*.pushurl":
		// `HELPER::ADDRESS` runs git-remote-HELPER (ext:: runs any
		// command where it is allowed); a leading '-' reads as an option.
		return !strings.Contains(e.value, "::") && !strings.HasPrefix(e.value, "-")
	}
	return true
}

// formatConfig writes entries in git's config format, each value quoted
// and escaped, so the file reads back as exactly these entries.
func formatConfig(entries []entry) string {
	var b strings.Builder
	lastSec, lastSub, open := "", "", false
	quote := func(s string) string {
		s = strings.ReplaceAll(s, `\`, `\\`)
		s = strings.ReplaceAll(s, `"`, `\"`)
		s = strings.ReplaceAll(s, "\t", `\t`)
		s = strings.ReplaceAll(s, "\b", `\b`)
		return `"` + s + `"`
	}
	for _, e := range entries {
		if !open || e.section != lastSec || e.sub != lastSub {
			if e.sub != "" {
				b.WriteString("[" + e.section + " \"" + subQuote(e.sub) + "\"]\n")
			} else {
				b.WriteString("[" + e.section + "]\n")
			}
			lastSec, lastSub, open = e.section, e.sub, true
		}
		if e.bare {
			b.WriteString("\t" + e.key + "\n")
			continue
		}
		b.WriteString("\t" + e.key + " = " + quote(e.value) + "\n")
	}
	return b.String()
}

// subQuote escapes a subsection name: in a header only \\ and \" are escapes.
func subQuote(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`)
}

// defaultConfig is what a created repository's config becomes when it
// cannot be read: `git init`'s own.
const defaultConfig = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"
