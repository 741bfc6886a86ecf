package main

import (
	"strings"
	"testing"
)

// TestInteractiveShellStop (issue 48 item 4): a running !command shows a
// running indicator in the status line, Esc stops it (its process group
// torn down), the screen says it was stopped, and the prompt works again
// with the stopped command's output going with the next prompt.
func TestInteractiveShellStop(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: after the stop
    text: "prompt works again."
`)
	home, cwd := t.TempDir(), t.TempDir()
	tm, wait := mockTerm(t, home, cwd, url)
	tm.typeKeys("!echo SLEEP-BEGUN; sleep 30\r")
	tm.waitFor("! running ")
	tm.waitFor("Esc stops it")
	tm.typeKeys("\x1b")
	tm.waitFor("stopped: you stopped this command")
	tm.typeKeys("after the stop\r")
	tm.waitFor("prompt works again.")
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
	got := userPrompts(t, home)
	if len(got) != 1 || !strings.Contains(got[0], "SLEEP-BEGUN") || !strings.Contains(got[0], "[the user stopped this command]") {
		t.Errorf("prompts the model got: %q", got)
	}
}
