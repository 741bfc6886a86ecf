package tui

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestDomainQuestion: the proxy's question "allow HOST for this session?"
// shows the host escaped; a key typed before it was armed does not answer
// it; y allows, n refuses (no instruction is asked for); a question whose
// connection stopped waiting leaves the screen, and the next one comes to
// the front.
func TestDomainQuestion(t *testing.T) {
	s := newScreen(t, "", nil)
	ask := func(ctx context.Context, host string) chan bool {
		got := make(chan bool, 1)
		go func() { got <- s.m.feed.askDomain(ctx, host) }()
		n := len(s.m.approvals)
		s.pump(func() bool { return len(s.m.approvals) > n })
		return got
	}
	ctx := t.Context()

	got := ask(ctx, "ex\x1b[2Jample.com")
	s.send(tea.KeyPressMsg{Code: 'y', Text: "y"}) // before it is armed
	if len(s.m.approvals) != 1 {                  // keys are handled synchronously
		t.Fatal("a key typed before the question was armed answered it")
	}
	s.armHead()
	v := s.view()
	if !strings.Contains(v, "? allow ex") || !strings.Contains(v, "ample.com for this session?") || strings.Contains(v, "\x1b[2J") {
		t.Fatalf("question:\n%q", v)
	}
	if !strings.Contains(v, "[y] allow for this session  [n] refuse  [Esc] refuse") {
		t.Fatalf("hint:\n%s", v)
	}
	s.send(tea.KeyPressMsg{Code: 'n', Text: "n"})
	if ok := <-got; ok {
		t.Fatal("n allowed the host")
	}
	if len(s.m.approvals) != 0 || !strings.Contains(s.log(), "ample.com: refused for this session") {
		t.Fatalf("after n: %d questions; log:\n%s", len(s.m.approvals), s.log())
	}

	got = ask(ctx, "allowed.example")
	s.armHead()
	s.send(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if ok := <-got; !ok || !strings.Contains(s.log(), "network allowed.example: allowed for this session") {
		t.Fatalf("y: %v; log:\n%s", ok, s.log())
	}
	// The network state changed: the model is told before its next step
	// (issue 48 item 4), the refused host too.
	if n := s.m.modeNotice(); !strings.Contains(n, "The user allowed for this session: allowed.example.") ||
		!strings.Contains(n, "The user refused for this session: ex\x1b[2Jample.com.") {
		t.Errorf("mode notice after the answers: %q", n)
	}

	// Two questions up; the head's connection stops waiting.
	cctx, cancel := context.WithCancel(ctx)
	first := ask(cctx, "gone.example")
	second := ask(ctx, "next.example")
	head := s.m.approvals[0]
	s.armHead()
	cancel()
	if ok := <-first; ok {
		t.Fatal("a withdrawn question allowed its host")
	}
	s.send(awaitWithdraw(head)()) // returns at once: its connection is gone
	if len(s.m.approvals) != 1 || !strings.Contains(s.log(), "network gone.example: not answered") {
		t.Fatalf("after the withdrawal: %d questions; log:\n%s", len(s.m.approvals), s.log())
	}
	s.armHead()
	if v := s.view(); !strings.Contains(v, "allow next.example for this session?") {
		t.Fatalf("the next question is not up:\n%s", v)
	}
	s.send(tea.KeyPressMsg{Code: tea.KeyEscape})
	if ok := <-second; ok {
		t.Fatal("Esc allowed the host")
	}
}

// TestDomainQuestionOutlivesTurn: a turn that ends refuses its tools'
// open questions, but a domain question — the proxy's, maybe a background
// command's — stays up, comes to the front, and is answered by the user.
func TestDomainQuestionOutlivesTurn(t *testing.T) {
	s := newScreen(t, "", nil)
	tool := &approval{name: "bash", args: []byte(`{"command":"ls"}`), reply: make(chan bool, 1)}
	s.feedItems(item{approve: tool})
	got := make(chan bool, 1)
	go func() { got <- s.m.feed.askDomain(t.Context(), "bg.example") }()
	s.pump(func() bool { return len(s.m.approvals) == 2 })
	s.m.running, s.m.turnSeq = true, 7
	s.send(feedMsg{[]item{{done: &turnDone{seq: 7}}}})
	if ok := <-tool.reply; ok {
		t.Fatal("the tool's question was allowed at the turn's end")
	}
	if len(s.m.approvals) != 1 || !isDomain(s.m.approvals[0]) {
		t.Fatalf("after the turn: %d questions", len(s.m.approvals))
	}
	s.armHead()
	s.send(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if ok := <-got; !ok {
		t.Fatal("y did not allow the host")
	}
}
