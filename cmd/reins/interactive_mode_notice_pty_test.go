package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/session"
)

// TestInteractiveModeNotice (issue 48 item 4): the model is told the
// session's modes in a logged user-side message — at the session's start
// and after Shift-Tab changes the mode — never in the system prompt; a
// call the read-only mode refuses says it was the mode, and how to
// change it, not a person's rejection.
func TestInteractiveModeNotice(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: "Question mode: ask: write, edit and bash wait for the user's answer"
    text: "MODEL-KNOWS-ASK"
  - match: "Question mode: read-only (a plan mode)"
    toolCalls:
      - {id: w1, name: write, arguments: {path: plan.txt, content: "x\n"}}
  - match: "the write call was refused: the session is in read-only mode, so it was refused without asking anyone; the user can change the mode with Shift-Tab"
    text: "MODEL-SAW-MODE-REFUSAL"
fallback:
  text: "FALLBACK"
`)
	home, cwd := t.TempDir(), t.TempDir()
	tm, wait := mockTerm(t, home, cwd, url)
	tm.typeKeys("FIRST-PROMPT\r")
	tm.waitFor("MODEL-KNOWS-ASK")
	tm.waitIdle()
	// Shift-Tab changes the mode in the update that reads it, so the
	// prompt typed after it is sent in read-only mode: the test keeps to
	// key order, not to the status bar, which the renderer redraws only
	// in the cells that change ("auto-edit" → "read-only" need never be
	// written whole).
	tm.typeKeys("\x1b[Z\x1b[Z")
	tm.typeKeys("SECOND-PROMPT\r")
	tm.waitFor("MODEL-SAW-MODE-REFUSAL")
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
	if _, err := os.Stat(filepath.Join(cwd, "plan.txt")); err == nil {
		t.Error("the write ran in read-only mode")
	}
	if got := userPrompts(t, home); len(got) != 2 || got[0] != "FIRST-PROMPT" || got[1] != "SECOND-PROMPT" {
		t.Errorf("prompts %q: a notice counted as a prompt", got)
	}
	paths, _ := filepath.Glob(filepath.Join(home, "sessions", "*", session.FileName))
	if len(paths) != 1 {
		t.Fatalf("session logs %v", paths)
	}
	ld, err := session.Load(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var notices []string
	for _, e := range ld.Events {
		var d session.UserMessage
		if e.Type == session.TypeUserMessage && e.Decode(&d) == nil && d.Notice == session.NoticeMode {
			notices = append(notices, d.Message.Text())
		}
	}
	if len(notices) != 2 || !strings.Contains(notices[0], "Question mode: ask") || !strings.Contains(notices[1], "Question mode: read-only") {
		t.Errorf("mode notices in the log: %q", notices)
	}
}
