package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// ptyOut reads everything written to a pty until its last writer is gone.
func ptyOut(t *testing.T) (tty *os.File, read func() string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("this test needs a pseudo-terminal (/dev/ptmx): %v", err)
	}
	done := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(ptmx) // ends with EIO once the tty is closed everywhere
		done <- strings.ReplaceAll(string(b), "\r\n", "\n")
	}()
	return tty, func() string {
		tty.Close()
		s := <-done
		ptmx.Close()
		return s
	}
}

// TestRunStreamsOnTerminal (issue 15): with stdout on a terminal, reins run
// shows every step's answer text as it arrives (the first step's text,
// which the final output of the run does not include, too), escaped, and
// with stderr on a terminal each tool call with a summary of its
// arguments. Into a pipe, stdout is the final output only, raw.
func TestRunStreamsOnTerminal(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: go-look
    text: "Looking \u001b[1mfirst."
    toolCalls:
      - {id: c1, name: ls, arguments: {path: "."}}
  - match: "c1"
    text: "Found it."
fallback:
  text: "Found it."
`)
	home := t.TempDir()

	cmd := reinsCmd(t, home, "run", "-m", "openai/test", "--base-url", url, "go-look")
	out, readOut := ptyOut(t)
	errTTY, readErr := ptyOut(t)
	cmd.Stdout, cmd.Stderr = out, errTTY
	cmd.Env = append(cmd.Env, "NO_COLOR=1")
	if err := cmd.Run(); err != nil {
		t.Fatalf("reins run: %v\nstderr %s", err, readErr())
	}
	stdout, stderr := readOut(), readErr()
	if want := "Looking \\x1b[1mfirst.\nFound it.\n"; stdout != want {
		t.Errorf("terminal stdout %q, want %q", stdout, want)
	}
	if !strings.Contains(stderr, "  ↳ ls path=.\n") {
		t.Errorf("terminal stderr lacks the tool call's summary: %q", stderr)
	}

	cmd = reinsCmd(t, home, "run", "-m", "openai/test", "--base-url", url, "go-look")
	var pipe bytes.Buffer
	cmd.Stdout = &pipe
	if code, stderr := exitCode(t, cmd); code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if got := pipe.String(); got != "Found it.\n" {
		t.Errorf("piped stdout %q", got)
	}
}
