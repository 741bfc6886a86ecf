//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInteractiveAsksAboutChangedProjectFiles (issue 47, item 3): in the
// terminal, a project file changed since the folder was trusted is shown
// (state, path and its content, escaped) and asked about before anything
// runs. n leaves it unapproved: reins stops with exit 2 and the message a
// headless run gives, no request made. y pins exactly the content shown,
// and the session then uses it.
func TestInteractiveAsksAboutChangedProjectFiles(t *testing.T) {
	url, srv := startMock(t, "fallback:\n  text: ANSWERED.\n")
	home, cwd := t.TempDir(), t.TempDir()
	agents := filepath.Join(cwd, "AGENTS.md")
	if err := os.WriteFile(agents, []byte("OLD-INSTRUCTIONS\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stderr := exitCode(t, reinsCmd(t, home, "trust", cwd)); code != 0 {
		t.Fatalf("reins trust: %d %s", code, stderr)
	}
	if err := os.WriteFile(agents, []byte("NEW-INSTRUCTIONS\x1b]0;pwned\x07\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--cwd", cwd, "-m", "openai/test", "--base-url", url}
	env := []string{"NO_COLOR=1", "TERM=xterm-256color"}

	t.Run("n refuses", func(t *testing.T) {
		tm, wait := startTerm(t, home, env, args...)
		tm.waitFor("changed    AGENTS.md")
		tm.waitFor(`│ NEW-INSTRUCTIONS\x1b]0;pwned\x07`)
		tm.waitFor("[y/N]")
		tm.typeKeys("n")
		err := wait()
		var ee *exec.ExitError
		if !asExit(err, &ee) || ee.ExitCode() != 2 {
			t.Fatalf("exit %v, want 2; screen:\n%s", err, tm.text())
		}
		if !strings.Contains(tm.text(), "AGENTS.md (changed)") || !strings.Contains(tm.text(), "reins trust") {
			t.Errorf("no refusal message:\n%s", tm.text())
		}
		if strings.Contains(tm.raw(), "\x1b]0;pwned") {
			t.Error("the file's escape sequence reached the terminal")
		}
		if srv.Count() != 0 {
			t.Errorf("%d requests before approval", srv.Count())
		}
	})
	t.Run("y approves what was shown", func(t *testing.T) {
		tm, wait := startTerm(t, home, env, args...)
		tm.waitFor("[y/N]")
		tm.typeKeys("y")
		tm.waitFor("new session")
		tm.typeKeys("hello\r")
		tm.waitFor("ANSWERED.")
		tm.waitIdle()
		tm.typeKeys("\x04")
		if err := wait(); err != nil {
			t.Fatalf("exit %v; screen:\n%s", err, tm.text())
		}
		r, ok := srv.Request(srv.Count() - 1)
		if !ok || !strings.Contains(string(r.Body), "NEW-INSTRUCTIONS") {
			t.Errorf("the approved AGENTS.md did not reach the model")
		}
		if code, stderr := exitCode(t, reinsCmd(t, home, "trust", "--show", cwd)); code != 0 {
			t.Errorf("trust --show: %d %s", code, stderr)
		}
		// A headless run now agrees: the file is pinned.
		cmd := reinsCmd(t, home, "run", "--cwd", cwd, "-m", "openai/test", "--base-url", url, "again")
		if code, stderr := exitCode(t, cmd); code != 0 {
			t.Errorf("reins run after the terminal's approval: exit %d: %s", code, stderr)
		}
	})
}

func asExit(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*ee = e
	return ok
}
