package cli

import (
	"os"
	"runtime"
	"testing"

	"github.com/creack/pty"
)

// TestIsTerminal: a pseudo-terminal is one; /dev/null (a character
// device), a pipe and a non-file are not.
func TestIsTerminal(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no pty")
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("this test needs a pseudo-terminal (/dev/ptmx): %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, c := range []struct {
		name string
		v    any
		want bool
	}{{"pty", tty, true}, {"/dev/null", null, false}, {"pipe", r, false}, {"not a file", "x", false}} {
		if got := IsTerminal(c.v); got != c.want {
			t.Errorf("IsTerminal(%s) = %v, want %v", c.name, got, c.want)
		}
	}
}
