package acpchild

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/subagent"
)

// startWithin runs Start in the background and fails the test if it has
// not returned within limit: the bug was a start that never returns.
func startWithin(t *testing.T, p subagent.Provider, req subagent.Request, limit time.Duration) (subagent.Run, error) {
	t.Helper()
	type out struct {
		r   subagent.Run
		err error
	}
	ch := make(chan out, 1)
	go func() {
		r, err := p.Start(context.Background(), req)
		ch <- out{r, err}
	}()
	select {
	case o := <-ch:
		return o.r, o.err
	case <-time.After(limit):
		t.Fatalf("Start has not returned after %s", limit)
		return nil, nil
	}
}

// The agent's timeout covers the whole run, the start included: a child
// that never answers initialize ends aborted with a timeout diagnostic
// (issue 14 item 3; the timer used to start after the handshake).
func TestTimeoutCoversStart(t *testing.T) {
	f := newFixture(t)
	ag := f.agent("hang_init", "", nil)
	ag.Timeout = 700 * time.Millisecond
	began := time.Now()
	_, err := startWithin(t, f.provider(), f.request(ag, "x"), 20*time.Second)
	var se *subagent.StartError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a StartError", err)
	}
	want := "Subagent failure (provider: acp; stage: initialize; category: timeout; stop reason: aborted)"
	if se.Diagnostic != want || se.StopReason != outcome.StopAborted {
		t.Errorf("got (%q, %q), want (%q, aborted)", se.Diagnostic, se.StopReason, want)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("Start took %s", d)
	}
	if live := f.leftBehind(); len(live) > 0 {
		t.Fatalf("Start returned with processes alive: %v", live)
	}
}

// Every start has a deadline (subagents.startTimeout) even when the agent
// file sets no timeout.
func TestStartDeadline(t *testing.T) {
	f := newFixture(t)
	p := New(Options{Ladder: testLadder, StartTimeout: 700 * time.Millisecond})
	_, err := startWithin(t, p, f.request(f.agent("hang_init", "", nil), "x"), 20*time.Second)
	var se *subagent.StartError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a StartError", err)
	}
	want := "Subagent failure (provider: acp; stage: initialize; category: timeout; stop reason: error)"
	if se.Diagnostic != want || se.StopReason != outcome.StopError {
		t.Errorf("got (%q, %q), want (%q, error)", se.Diagnostic, se.StopReason, want)
	}
	if live := f.leftBehind(); len(live) > 0 {
		t.Fatalf("Start returned with processes alive: %v", live)
	}
}
