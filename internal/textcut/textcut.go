// Package textcut shortens plain text by bytes without splitting a rune:
// cut with "…", folded onto one line, or its last bytes. It is the
// byte-level half of internal/tui/termtext (which re-exports it), kept
// apart so that code printing outside the terminal UI (`reins run`'s
// progress lines, through toolsummary) does not link the UI's
// cell-width library. It escapes nothing; callers escape (termsafe).
package textcut

import (
	"fmt"
	"strings"
)

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

// Bytes is a size as the screens say it: "N bytes", or KiB with one
// decimal from 1024 on.
func Bytes(n int) string {
	if n >= 1024 {
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%d bytes", n)
}
