package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/rules"
)

// TestRejectInstruction: n keeps the editor's draft aside and takes an
// instruction, Enter sends it with the refusal and gives the draft back;
// Esc on the question rejects at once with none.
func TestRejectInstruction(t *testing.T) {
	s := newScreen(t, "", nil)
	for _, r := range "half a prompt" {
		s.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	a := &approval{name: "bash", args: json.RawMessage(`{"command":"rm -rf build"}`), reply: make(chan bool, 1)}
	s.feedItems(item{approve: a})
	s.armHead()
	if v := s.view(); !strings.Contains(v, "[a] always allow bash(rm -rf build)  [n] reject…  [Esc] reject") {
		t.Fatalf("question:\n%s", v)
	}
	s.send(tea.KeyPressMsg{Code: 'n', Text: "n"})
	if v := s.view(); !strings.Contains(v, "what should it do instead?") || s.m.editor.Value() != "" {
		t.Fatalf("after n: editor %q\n%s", s.m.editor.Value(), v)
	}
	for _, r := range "clean only build/tmp" {
		s.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	s.send(tea.KeyPressMsg{Code: tea.KeyEnter})
	if ok := <-a.reply; ok || a.note != "clean only build/tmp" {
		t.Fatalf("reply %v note %q", ok, a.note)
	}
	if s.m.editor.Value() != "half a prompt" {
		t.Errorf("the draft was not given back: %q", s.m.editor.Value())
	}
	if !strings.Contains(s.log(), "rejected, with your instruction: clean only build/tmp") {
		t.Errorf("log:\n%s", s.log())
	}
	b := &approval{name: "bash", args: json.RawMessage(`{"command":"ls"}`), reply: make(chan bool, 1)}
	s.feedItems(item{approve: b})
	s.armHead()
	s.send(tea.KeyPressMsg{Code: tea.KeyEscape})
	if ok := <-b.reply; ok || b.note != "" {
		t.Fatalf("Esc: reply %v note %q", ok, b.note)
	}
}

// TestReadOnlyHoldsRules: Shift-Tab to read-only holds the session's
// allow rules back (the call asks, and the mode refuses it); back to ask,
// they apply again. Deny rules hold throughout.
func TestReadOnlyHoldsRules(t *testing.T) {
	s := newScreen(t, "", nil)
	set := s.m.sessionRules()
	if set == nil {
		t.Fatal("the session has no rules")
	}
	r, _ := rules.Parse("bash(ls:*)")
	set.Add(r)
	args := json.RawMessage(`{"command":"ls -l"}`)
	if v, _ := set.Decide("bash", args); v != rules.VerdictAllow {
		t.Fatalf("before: %q", v)
	}
	for s.m.mode != modeReadOnly {
		s.send(tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift})
	}
	if v, _ := set.Decide("bash", args); v != rules.VerdictAsk {
		t.Errorf("read-only: %q", v)
	}
	for s.m.mode != modeAsk {
		s.send(tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift})
	}
	if v, _ := set.Decide("bash", args); v != rules.VerdictAllow {
		t.Errorf("back to ask: %q", v)
	}
}

// TestShellStop: a running !command shows in the status line; Esc stops
// it (its process group is torn down), the screen and the next prompt's
// context say it was stopped, and its output, escaped, is kept.
func TestShellStop(t *testing.T) {
	s := newScreen(t, "", nil)
	cmd := s.m.shellStart(`printf 'A\033[2JB\n'; touch started; sleep 60`)
	if cmd == nil || s.m.shell == nil {
		t.Fatal("the command did not start")
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(s.cwd, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never printed")
		}
	}
	if v := s.view(); !strings.Contains(v, "! running ") || !strings.Contains(v, "Esc stops it") {
		t.Errorf("no running indicator:\n%s", v)
	}
	s.send(tea.KeyPressMsg{Code: tea.KeyEscape})
	done := make(chan tea.Msg, 1)
	go func() { done <- shellDoneOf(cmd) }()
	select {
	case msg := <-done:
		s.send(msg)
	case <-time.After(60 * time.Second):
		t.Fatal("the stopped command did not end")
	}
	if s.m.shell != nil || len(s.m.shellCtx) != 1 || !strings.Contains(s.m.shellCtx[0], "[command canceled and killed]") {
		t.Fatalf("after Esc: running %v, context %q", s.m.shell != nil, s.m.shellCtx)
	}
	if !strings.Contains(s.m.shellCtx[0], "[the user stopped this command]") || !strings.Contains(s.log(), "stopped: you stopped this command") {
		t.Errorf("not said to be stopped: context %q; log:\n%s", s.m.shellCtx, s.log())
	}
	if v := s.view(); strings.Contains(v, "! running ") {
		t.Errorf("the indicator outlived the command:\n%s", v)
	}
	if log := s.log(); !strings.Contains(log, `A\x1b[2JB`) || strings.Contains(log, "\x1b[2J") {
		t.Errorf("the output was not escaped:\n%q", log)
	}
}

// shellDoneOf runs cmd, shellStart's (the wait for the end batched with
// the status line's tick), and returns the shellDoneMsg it yields once
// every part returned.
func shellDoneOf(cmd tea.Cmd) tea.Msg {
	msg := cmd()
	b, ok := msg.(tea.BatchMsg)
	if !ok {
		return msg
	}
	got := make(chan tea.Msg, len(b))
	n := 0
	for _, c := range b {
		if c != nil {
			n++
			go func() { got <- shellDoneOf(c) }()
		}
	}
	var done tea.Msg
	for range n { // every one, so no tick outlives the test
		if m, ok := (<-got).(shellDoneMsg); ok {
			done = m
		}
	}
	return done
}
