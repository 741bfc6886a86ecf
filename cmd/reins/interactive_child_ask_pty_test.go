package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// childAskScript: the parent delegates; the child writes a file, then
// says what it got back.
const childAskScript = `
replies:
  - match: DELEGATE-AUTO
    toolCalls:
      - {id: s1, name: subagent, arguments: {description: review notes, prompt: "CHILD-AUTO write it"}}
  - match: CHILD-AUTO
    toolCalls:
      - {id: w1, name: write, arguments: {path: auto.txt, content: "from the child\n"}}
  - match: "to auto.txt"
    text: "CHILD-WROTE-AUTO"
  - match: CHILD-WROTE-AUTO
    text: "PARENT-SAW-AUTO"
  - match: DELEGATE-ASK
    toolCalls:
      - {id: s2, name: subagent, arguments: {description: tidy docs, prompt: "CHILD-ASK write it"}}
  - match: CHILD-ASK
    toolCalls:
      - {id: w2, name: write, arguments: {path: ask.txt, content: "asked\n"}}
  - match: "not approved"
    text: "CHILD-GAVE-UP"
  - match: "refused in the child: the write call was not approved"
    text: "PARENT-SAW-REFUSAL"
fallback:
  text: "PARENT-FALLBACK"
`

// TestInteractiveChildFollowsMode (issue 48 item 3): in the interactive
// terminal a child's calls follow the parent's mode. In auto-edit its
// write runs without a question, like the parent's (it used to be
// refused "not approved" though nobody was asked, its row saying
// completed); in ask mode the user is asked, the question naming the
// child, and a refusal shows in the child's row and in the result its
// parent gets.
func TestInteractiveChildFollowsMode(t *testing.T) {
	url, _ := startMock(t, childAskScript)
	home, cwd := t.TempDir(), t.TempDir()
	tm, wait := mockTerm(t, home, cwd, url)

	tm.typeKeys("\x1b[Z") // Shift-Tab: auto-edit
	tm.waitFor("· auto-edit")
	tm.typeKeys("DELEGATE-AUTO\r")
	tm.waitFor("PARENT-SAW-AUTO")
	if b, err := os.ReadFile(filepath.Join(cwd, "auto.txt")); err != nil || string(b) != "from the child\n" {
		t.Fatalf("the child's write in auto-edit: %q %v; screen:\n%s", b, err, tm.text())
	}
	tm.waitFor("allowed (auto-edit) (child general: review notes)")

	// Read-only, then ask. No wait for the "mode: ask" notice: the
	// renderer redraws only the cells that changed, so after "mode:
	// read-only" the stream may hold just "ask"; keys are handled in
	// order, so the prompt below is sent in ask mode, and the question
	// it brings is the proof.
	tm.typeKeys("\x1b[Z\x1b[Z")
	tm.typeKeys("DELEGATE-ASK\r")
	tm.waitFor("? allow write ask.txt (child general: tidy docs)")
	tm.waitFor("[y] once")
	tm.typeKeys("\x1b") // Esc: reject
	tm.waitFor("PARENT-SAW-REFUSAL")
	tm.waitFor("(1 refused)")
	tm.waitFor("refused: the write call was not approved")
	if _, err := os.Stat(filepath.Join(cwd, "ask.txt")); err == nil {
		t.Error("the refused write happened")
	}
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
}

// TestInteractiveChildReadOnlyMode (issue 48 items 3 and 4): in the
// read-only mode a child's write is refused without a question, and the
// refusal the child's model gets names the mode and how to change it.
func TestInteractiveChildReadOnlyMode(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: DELEGATE-RO
    toolCalls:
      - {id: s1, name: subagent, arguments: {description: plan only, prompt: "CHILD-RO write it"}}
  - match: CHILD-RO
    toolCalls:
      - {id: w1, name: write, arguments: {path: ro.txt, content: "no\n"}}
  - match: "is in read-only mode, so it was refused without asking anyone; the user can change the mode with Shift-Tab"
    text: "CHILD-KNOWS-MODE"
  - match: "refused in the child: the write call was refused: the session is in read-only mode"
    text: "PARENT-KNOWS-MODE"
fallback:
  text: "FALLBACK"
`)
	home, cwd := t.TempDir(), t.TempDir()
	tm, wait := mockTerm(t, home, cwd, url)
	// Shift-Tab changes the mode in the update that reads it: the prompt
	// typed after it goes in read-only mode (key order, not the status
	// bar, which is redrawn only in the cells that change).
	tm.typeKeys("\x1b[Z\x1b[Z") // auto-edit, read-only
	tm.typeKeys("DELEGATE-RO\r")
	tm.waitFor("PARENT-KNOWS-MODE")
	tm.waitFor("refused (read-only mode; Shift-Tab changes it) (child general: plan only)")
	if strings.Contains(tm.text(), "? allow write") {
		t.Error("the read-only mode asked")
	}
	if _, err := os.Stat(filepath.Join(cwd, "ro.txt")); err == nil {
		t.Error("the write happened in read-only mode")
	}
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
}
