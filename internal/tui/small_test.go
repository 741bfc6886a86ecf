package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestResumeKeepsModel (issue 48 "Why" 12): /resume after /model keeps
// the model chosen, in the status bar and in the session that answers.
func TestResumeKeepsModel(t *testing.T) {
	s := newScreen(t, "", nil)
	s.typeText("first prompt")
	s.pump(func() bool { return !s.m.running })
	first := s.m.root
	s.typeText("/new")
	s.typeText("/model mock/demo")
	s.typeText("/resume " + first)
	if s.m.root != first {
		t.Fatalf("not resumed: %s", s.log())
	}
	if got := s.m.modelName(); got != "mock/demo" {
		t.Errorf("after /resume the model is %s, want mock/demo", got)
	}
}

// TestResumeReplaysAttachedAsNote (issue 48 "Why" 12): a resumed
// session's replay shows "@two.txt attached" for a file a prompt
// carried, not the file's body.
func TestResumeReplaysAttachedAsNote(t *testing.T) {
	s := newScreen(t, "", nil)
	if err := os.WriteFile(filepath.Join(s.cwd, "two.txt"), []byte("TWO-SECRET-BODY\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.typeText("read @two.txt now")
	s.pump(func() bool { return !s.m.running })
	first := s.m.root
	s.typeText("/new")
	s.committed = nil
	s.typeText("/resume " + first)
	l := s.log()
	if s.m.root != first || !strings.Contains(l, "› read @two.txt now") || !strings.Contains(l, "@two.txt attached") {
		t.Fatalf("replay:\n%s", l)
	}
	if i := strings.Index(l, "mock:"); strings.Contains(l[:max(i, 0)], "TWO-SECRET-BODY") {
		t.Errorf("the replayed prompt shows the file's body:\n%s", l)
	}
}

// TestQueuedShown (issue 48 "Why" 12): prompts sent while a turn runs are
// shown above the editor, each on one line, escaped, at most
// maxQueuedShown and then a count.
func TestQueuedShown(t *testing.T) {
	s := newScreen(t, "", nil)
	s.m.running = true
	for _, p := range []string{"first queued", "second\x1b[2J queued", "third", "fourth", "fifth"} {
		s.m.editor.SetValue(p)
		s.send(tea.KeyPressMsg{Code: tea.KeyEnter})
	}
	v := s.view()
	if strings.Contains(s.m.View().Content, "\x1b[2J") {
		t.Error("a queued prompt's escape reached the screen")
	}
	for _, want := range []string{"⧗ first queued", "⧗ second", "⧗ third", "… and 2 more queued"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "fourth") {
		t.Errorf("more than %d queued prompts drawn:\n%s", maxQueuedShown, v)
	}
	s.m.running = false
}

// TestResultSummaryTabs (issue 48 "Why" 12): a read result's summary
// shows its tab as spacing, not a literal \t; other controls stay escaped.
func TestResultSummaryTabs(t *testing.T) {
	got := resultSummary("     1\tpackage main\n     2\t\x1b[31mred\n")
	if got != "1  package main (2 lines)" {
		t.Errorf("summary %q", got)
	}
	if got := resultSummary("\x1b[2Jx\ty"); got != `\x1b[2Jx  y` {
		t.Errorf("escaped summary %q", got)
	}
}
