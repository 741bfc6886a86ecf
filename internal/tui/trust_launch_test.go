package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestTrustAtLaunchKeepsTypeAhead (issue 30, item 2): the folder question
// asked as the screen starts does not flush keys the user typed while
// reins was starting (the terminal still holds them): it defers, those
// keys become the prompt, and that prompt's Enter queues it and arms the
// question — flushing only then. With nothing pending it arms at once.
func TestTrustAtLaunchKeepsTypeAhead(t *testing.T) {
	for _, pending := range []bool{true, false} {
		flushes := 0
		s := newScreen(t, "", func(o *Options) {
			o.Trust = &TrustQuestion{AskNow: true, Never: func() error { return nil }}
			o.FlushInput = func() { flushes++ }
			o.PendingInput = func() bool { return pending }
		})
		s.m.h.Ignored = []string{"AGENTS.md"}
		msg := s.m.askTrustAtLaunch()()
		if !pending {
			if _, ok := msg.(trustArmMsg); !ok || flushes != 1 {
				t.Fatalf("nothing pending: got %T after %d flushes, want the question armed after one", msg, flushes)
			}
			continue
		}
		if _, ok := msg.(trustDeferMsg); !ok || flushes != 0 {
			t.Fatalf("keys pending: got %T after %d flushes, want the question deferred, nothing flushed", msg, flushes)
		}
		s.send(msg)
		if v := s.view(); !strings.Contains(v, "press Enter") || strings.Contains(v, "[y] trust") {
			t.Fatalf("deferred question on screen:\n%s", v)
		}
		// The typed-ahead keys arrive: "y" among them answers nothing.
		for _, r := range "yes, TYPED AHEAD" {
			s.send(tea.KeyPressMsg{Code: r, Text: string(r)})
		}
		if s.m.trustQ == nil || s.m.trustQ.armed {
			t.Fatal("a typed-ahead key answered the deferred question")
		}
		cmd := s.send(tea.KeyPressMsg{Code: tea.KeyEnter})
		if len(s.m.queue) != 1 || s.m.queue[0] != "yes, TYPED AHEAD" {
			t.Fatalf("queue = %q", s.m.queue)
		}
		if cmd == nil {
			t.Fatal("Enter did not bring the question to the front")
		}
		arm := cmd()
		if _, ok := arm.(trustArmMsg); !ok || flushes != 1 {
			t.Fatalf("after Enter: %T after %d flushes, want armed after one flush", arm, flushes)
		}
		s.send(arm)
		if v := s.view(); !strings.Contains(v, "[y] trust this folder") {
			t.Fatalf("armed question not shown:\n%s", v)
		}
	}
}
