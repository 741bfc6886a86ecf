package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestGitQuestion: the .git question names the command escaped, on one
// line and cut; a key typed before it was armed, Enter and other keys do
// not answer it (it lifts a sandbox wall: only y does); y allows it once,
// n and Esc refuse, each leaving its line; no mode decides it.
func TestGitQuestion(t *testing.T) {
	s := newScreen(t, "", nil)
	ask := func(command string) chan bool {
		got := make(chan bool, 1)
		go func() { got <- s.m.feed.askGitWritable(t.Context(), command) }()
		n := len(s.m.approvals)
		s.pump(func() bool { return len(s.m.approvals) > n })
		return got
	}
	long := "git commit -m '\x1b[2Jx\nsecond line' " + strings.Repeat("A", 400)
	got := ask(long)
	s.send(tea.KeyPressMsg{Code: 'y', Text: "y"}) // before it is armed
	if len(s.m.approvals) != 1 {
		t.Fatal("a key typed before the question was armed answered it")
	}
	s.armHead()
	v := s.view()
	if !strings.Contains(v, "? run again with .git writable: git commit -m '\\x1b[2Jx\\nsecond line'") ||
		strings.Contains(v, "\x1b[2J") || strings.Contains(v, strings.Repeat("A", 250)) {
		t.Fatalf("question:\n%q", v)
	}
	if !strings.Contains(v, "[y] once  [n] no  [Esc] no") {
		t.Fatalf("hint:\n%s", v)
	}
	for _, k := range []tea.KeyPressMsg{{Code: tea.KeyEnter}, {Code: 'a', Text: "a"}} {
		s.send(k)
		if len(s.m.approvals) != 1 {
			t.Fatalf("%q answered the question", k.String())
		}
	}
	s.send(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if ok := <-got; !ok || !strings.Contains(s.log(), "running it once more with .git writable") {
		t.Fatalf("y: %v; log:\n%s", ok, s.log())
	}
	for _, k := range []tea.KeyPressMsg{{Code: 'n', Text: "n"}, {Code: tea.KeyEscape}} {
		got = ask("git add f")
		s.armHead()
		s.send(k)
		if ok := <-got; ok || len(s.m.approvals) != 0 {
			t.Fatalf("%q: allowed %v, %d questions left", k.String(), ok, len(s.m.approvals))
		}
	}
	if n := strings.Count(s.log(), ".git: git add f: refused; .git stays read-only"); n != 2 {
		t.Errorf("refusal lines: %d; log:\n%s", n, s.log())
	}
	// No mode answers it: in auto-edit it is still asked.
	s.m.mode = modeAutoEdit
	got = ask("git commit")
	if len(s.m.approvals) != 1 {
		t.Fatal("the mode answered the .git question")
	}
	s.armHead()
	s.send(tea.KeyPressMsg{Code: 'n', Text: "n"})
	<-got
}
