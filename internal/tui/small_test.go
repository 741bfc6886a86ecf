package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/harness"
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

// TestTrustKeepsTheSession (issue 48 "Why" 12): answering the folder
// question with y before any prompt reopens the same session on the
// trusting harness; no second, empty session is left behind.
func TestTrustKeepsTheSession(t *testing.T) {
	var s *screen
	s = newScreen(t, "", func(o *Options) {
		o.Trust = &TrustQuestion{AskNow: true, Never: func() error { return nil },
			Trust: func(context.Context) (*harness.Harness, harness.SessionOptions, error) {
				h2, err := harness.New(harness.Options{Home: s.m.h.Home, Cwd: s.m.h.Cwd, Getenv: func(string) string { return "" }})
				if err != nil {
					return nil, harness.SessionOptions{}, err
				}
				t.Cleanup(func() { h2.Close() })
				return h2, s.m.opts.Session, nil
			}}
		o.PendingInput = func() bool { return false }
	})
	s.m.h.Ignored = []string{"AGENTS.md"}
	root := s.m.root
	s.send(s.m.askTrustAtLaunch()())
	s.send(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if s.m.trustQ != nil {
		t.Fatalf("the question is still up:\n%s", s.view())
	}
	if s.m.root != root {
		t.Errorf("trusting opened session %s; want %s continued", s.m.root, root)
	}
	ents, err := os.ReadDir(s.m.h.SessionsDir())
	if err != nil || len(ents) != 1 {
		t.Errorf("sessions after trusting: %d (%v), want 1", len(ents), err)
	}
	s.typeText("after trust")
	s.pump(func() bool { return !s.m.running })
	if !strings.Contains(s.log(), "mock: after trust") {
		t.Errorf("the session does not answer after trust:\n%s", s.log())
	}
}
