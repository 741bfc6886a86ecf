// Package termtext fits text to a terminal: cut to a number of bytes or
// cells without splitting a rune, wrapped, folded onto one line, or
// reduced to its last lines or bytes. It escapes nothing; callers escape
// what a model, a tool or a child wrote (termsafe) first, so every escape
// sequence it measures is the screen's own styling. Its byte cuts are
// package plain's, which links no terminal library.
package termtext

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/reinsdev/reins/internal/textcut"
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
// into one space (textcut.OneLine).
func OneLine(s string) string { return textcut.OneLine(s) }

// Cut shortens s to at most n bytes (on a rune boundary) ending in "…"
// (textcut.Cut).
func Cut(s string, n int) string { return textcut.Cut(s, n) }

// LastBytes is the last n bytes of s or fewer, starting on a rune
// (textcut.LastBytes).
func LastBytes(s string, n int) string { return textcut.LastBytes(s, n) }

// Bytes is a size as the screen says it: "N bytes", or "N.N KiB" from
// 1 KiB on (textcut.Bytes).
func Bytes(n int) string { return textcut.Bytes(n) }

// Width is how many cells s takes on a terminal, styled or not.
func Width(s string) int { return ansi.StringWidth(s) }
