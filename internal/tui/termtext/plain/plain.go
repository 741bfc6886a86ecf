// Package plain cuts plain text by bytes: on a rune boundary, folded onto
// one line, or reduced to its last bytes. It is termtext's part that
// needs no terminal library, so that what only measures bytes (the tool
// summaries of reins run's progress lines, toolsummary) links none: the
// interactive screen's libraries stay in reins-tui (docs/interactive.md).
package plain

import "strings"

// OneLine is s with every run of white space (newlines included) folded
// into one space.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Cut shortens s to at most n bytes (on a rune boundary) ending in "…".
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

// LastBytes is the last n bytes of s or fewer, starting on a rune.
func LastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	for len(s) > 0 && s[0]&0xC0 == 0x80 {
		s = s[1:]
	}
	return s
}
