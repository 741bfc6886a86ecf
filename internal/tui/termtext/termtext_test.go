package termtext

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestCutsKeepRunes: byte cuts never split a rune; cell cuts and wraps
// measure styled text by its cells.
func TestCutsKeepRunes(t *testing.T) {
	if got := Cut("aébcdef", 5); got != "a…" {
		t.Errorf("Cut = %q", got)
	}
	if got := Cut("short", 10); got != "short" {
		t.Errorf("Cut short = %q", got)
	}
	if got := LastBytes("aé", 1); got != "" {
		t.Errorf("LastBytes split a rune: %q", got)
	}
	if got := LastBytes("abcé", 3); got != "cé" {
		t.Errorf("LastBytes = %q", got)
	}
	styled := "\x1b[1m" + "0123456789" + "\x1b[0m"
	if got := Fit(styled, 5); ansi.StringWidth(got) != 5 || ansi.Strip(got) != "0123…" {
		t.Errorf("Fit = %q", got)
	}
	if got := Wrap("aaa bbb ccc", 7); got != "aaa bbb\nccc" {
		t.Errorf("Wrap = %q", got)
	}
	if got := Tail("1\n2\n3", 2); got != "2\n3" {
		t.Errorf("Tail = %q", got)
	}
	if got := OneLine(" a\n\tb  c "); got != "a b c" {
		t.Errorf("OneLine = %q", got)
	}
	if Bytes(1023) != "1023 bytes" || Bytes(1536) != "1.5 KiB" {
		t.Errorf("Bytes = %q, %q", Bytes(1023), Bytes(1536))
	}
}
