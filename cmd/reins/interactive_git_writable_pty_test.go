package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/sandbox"
)

// gitWritableScript is the mock model of the .git question's tests: GO
// makes it run a commit in the workspace's repository; the result it then
// gets (the second run's, or the first's with the read-only hint) decides
// its answer.
var gitWritableScript = fmt.Sprintf(`
replies:
  - match: GO-COMMIT
    toolCalls:
      - {id: g1, name: bash, arguments: {command: %q}}
  - match: "run once more with .git writable"
    text: "second run seen."
  - match: "note: .git is read-only"
    text: "read-only hint seen."
`, "git -c user.name=t -c user.email=t@t commit --allow-empty -q -m GIT-Q-COMMIT && echo COMMITTED-OK")

// startGitWritable starts the terminal in a repository with one commit
// and has the model's commit fail on the read-only .git, up to the .git
// question (issue 47 item 1).
func startGitWritable(t *testing.T) (*ptyTerm, func() error, string, int) {
	t.Helper()
	if !sandbox.Doctor().Namespaces {
		t.Fatal("this test needs unprivileged user namespaces (.git is read-only only in the container; README, \"Run the tests\")")
	}
	url, _ := startMock(t, gitWritableScript)
	home, ws := t.TempDir(), t.TempDir()
	gitCmd(t, ws, "init", "-q")
	gitCmd(t, ws, "commit", "--allow-empty", "-q", "-m", "init")
	tm, wait := startTerm(t, home, []string{"NO_COLOR=1", "TERM=xterm-256color"}, "--cwd", ws, "-m", "openai/test", "--base-url", url)
	tm.waitFor("new session")
	tm.typeKeys("GO-COMMIT\r")
	tm.waitFor("[y] once") // the bash tool's own question
	off := len(tm.text())
	tm.typeKeys("y")
	waitAfter(tm, off, "? run again with .git writable: git -c user.name=t")
	waitAfter(tm, off, "[y] once  [n] no  [Esc] no")
	return tm, wait, ws, off
}

// TestInteractiveGitWritableYes: the model's git commit fails on the
// read-only .git, the terminal asks to run it again with .git writable,
// y runs it once more so: the commit is in git log and the model gets the
// second run's result, saying why it ran so.
func TestInteractiveGitWritableYes(t *testing.T) {
	tm, wait, ws, off := startGitWritable(t)
	tm.typeKeys("y")
	waitAfter(tm, off, "running it once more with .git writable")
	waitAfter(tm, off, "second run seen.")
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
	if log := gitCmd(t, ws, "log", "--format=%s"); !strings.Contains(log, "GIT-Q-COMMIT") {
		t.Errorf("no commit after y; git log:\n%s", log)
	}
}

// TestInteractiveGitWritableNo: n leaves .git read-only: no commit, and
// the model's result carries the read-only hint.
func TestInteractiveGitWritableNo(t *testing.T) {
	tm, wait, ws, off := startGitWritable(t)
	tm.typeKeys("n")
	waitAfter(tm, off, "refused; .git stays read-only")
	waitAfter(tm, off, "read-only hint seen.")
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
	if log := gitCmd(t, ws, "log", "--format=%s"); strings.Contains(log, "GIT-Q-COMMIT") {
		t.Errorf("a commit after n; git log:\n%s", log)
	}
}
