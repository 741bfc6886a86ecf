package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestNoTUIHelper: `reins` on a terminal with no reins-tui to find
// ($REINS_TUI empty, none beside the executable, none on PATH) exits 2
// with one line that names reins-tui and where the docs say how to get it.
func TestNoTUIHelper(t *testing.T) {
	cmd := reinsCmd(t, t.TempDir(), "-m", "mock/echo")
	cmd.Env = append(cmd.Env, tuiEnv+"=", "PATH="+t.TempDir())
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("this test needs a pseudo-terminal (/dev/ptmx): %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	go func() { // drain the terminal; nothing is drawn
		buf := make([]byte, 4096)
		for {
			if _, err := ptmx.Read(buf); err != nil {
				return
			}
		}
	}()
	cmd.Stdin, cmd.Stdout = tty, tty
	code, stderr := exitCode(t, cmd)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != exitUsage || len(lines) != 1 || !strings.HasPrefix(lines[0], "reins: reins-tui not found") || !strings.Contains(lines[0], "docs/interactive.md") {
		t.Errorf("exit %d, stderr %q; want 2 and one line naming reins-tui and the docs", code, stderr)
	}
}

// TestTUIKeepsProcess: reins becomes reins-tui in its own process (exec):
// the process the terminal started is the one that runs the screen, its
// executable reins-tui, and its exit status is the screen's.
func TestTUIKeepsProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/PID/exe")
	}
	url, _ := startMock(t, "fallback:\n  text: done\n")
	tm, wait := startTerm(t, t.TempDir(), []string{"NO_COLOR=1"}, "--cwd", t.TempDir(), "-m", "openai/test", "--base-url", url)
	tm.waitFor("new session")
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", tm.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	want, err := filepath.EvalSymlinks(os.Getenv(tuiEnv))
	if err != nil {
		t.Fatal(err)
	}
	if exe != want {
		t.Errorf("the screen's process %d runs %s, want %s (reins-tui, by exec)", tm.cmd.Process.Pid, exe, want)
	}
	tm.typeKeys("\x04") // Ctrl-D: the screen ends, status 0
	errc := make(chan error, 1)
	go func() { errc <- wait() }()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("exit after Ctrl-D: %v; screen:\n%s", err, tm.text())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("reins-tui did not exit after Ctrl-D; screen:\n%s", tm.text())
	}
}

// mockTerm is the pty tests' usual start: the terminal on cwd with the
// mock model at url (openai/test, colours off, a known TERM), plus args,
// once its first screen is up ("new session").
func mockTerm(t *testing.T, home, cwd, url string, args ...string) (*ptyTerm, func() error) {
	t.Helper()
	tm, wait := startTerm(t, home, []string{"NO_COLOR=1", "TERM=xterm-256color"}, append([]string{"--cwd", cwd, "-m", "openai/test", "--base-url", url}, args...)...)
	tm.waitFor("new session")
	return tm, wait
}
