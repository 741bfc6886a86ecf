package main

import (
	"strings"
	"testing"
)

// TestInteractiveTodoPinned (issue 30 item 8): the model's todo list is
// pinned above the prompt after its turn ends: a header with the tally,
// one line per item from the one before the first unfinished, control
// characters made visible, and the items that do not fit counted. A
// second call replaces the list.
func TestInteractiveTodoPinned(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: PLAN-IT
    toolCalls:
      - id: t1
        name: todo
        arguments:
          items:
            - {text: "step one", state: done}
            - {text: "step two", state: done}
            - {text: "step three", state: in_progress}
            - {text: "step four \e[8m hidden", state: pending}
            - {text: "step five", state: pending}
            - {text: "step six", state: pending}
            - {text: "step seven", state: pending}
            - {text: "step eight", state: pending}
            - {text: "step nine", state: pending}
            - {text: "step ten", state: pending}
  - match: "10 items"
    text: "PLANNED."
  - match: REPLAN
    toolCalls:
      - id: t2
        name: todo
        arguments:
          items:
            - {text: "only step", state: in_progress}
  - match: "1 items"
    text: "REPLANNED."
`)
	home := t.TempDir()
	tm, wait := startTerm(t, home, []string{"NO_COLOR=1", "TERM=xterm-256color"}, "--cwd", t.TempDir(), "-m", "openai/test", "--base-url", url)
	tm.waitFor("new session")
	tm.typeKeys("PLAN-IT\r")
	tm.waitFor("PLANNED.")
	tm.waitFor("todo 2/10 done")
	tm.waitFor("◐ step three")
	tm.waitFor(`step four \x1b[8m hidden`)
	tm.waitFor("… 4 more")
	screen := tm.text()
	if !strings.Contains(screen, "✓ step two") || strings.Contains(screen, "✓ step one") {
		t.Errorf("the window should start one before the first unfinished item:\n%s", screen)
	}
	tm.typeKeys("REPLAN\r")
	tm.waitFor("REPLANNED.")
	tm.waitFor("todo 0/1 done")
	tm.waitFor("◐ only step")
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
}
