package tui

import (
	"testing"
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
