// Package termtext fits text to a terminal: cut to a number of bytes or
// cells without splitting a rune, wrapped, folded onto one line, or
// reduced to its last lines or bytes. It escapes nothing; callers escape
// what a model, a tool or a child wrote (termsafe) first, so every escape
// sequence it measures is the screen's own styling.
package termtext

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Fit cuts a (possibly styled) line to width cells, ending it in "…".
func Fit(s string, width int) string {
	if width <= 0 || ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}

// Wrap breaks text to width cells (words where it can), styled or not.
func Wrap(s string, width int) string {
	if width <= 0 {
		return s
	}
	return ansi.Wrap(s, width, " ")
}

// Tail is the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

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

// Bytes is a size as the screen says it: "N bytes", or "N.N KiB" from
// 1 KiB on.
func Bytes(n int) string {
	if n >= 1024 {
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%d bytes", n)
}
