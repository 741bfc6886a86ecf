package remote

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
)

// farEnd records what the parent asked of the far side; it never answers
// unless the test delivers.
type farEnd struct{ cancels, terminates atomic.Int32 }

func (f *farEnd) Cancel()    { f.cancels.Add(1) }
func (f *farEnd) Terminate() { f.terminates.Add(1) }

// clock is the mocked clock: a timer of duration d fires when the test
// fires d (before or after Wait asked for it).
type clock struct {
	mu sync.Mutex
	c  map[time.Duration]chan time.Time
}

func (c *clock) ch(d time.Duration) chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c == nil {
		c.c = map[time.Duration]chan time.Time{}
	}
	if c.c[d] == nil {
		c.c[d] = make(chan time.Time, 1)
	}
	return c.c[d]
}

func (c *clock) After(d time.Duration) (<-chan time.Time, func()) { return c.ch(d), func() {} }
func (c *clock) fire(d time.Duration)                             { c.ch(d) <- time.Time{} }

const (
	timeout = time.Hour
	grace   = 10 * time.Second
)

func text(s string) []llm.Block { return []llm.Block{{Type: llm.BlockText, Text: s}} }

func diag(stop outcome.StopReason, cat outcome.Category) string {
	return outcome.Diagnostic{Provider: "inprocess", Stage: outcome.StageRemote, Category: cat, StopReason: stop}.String()
}

// Every way the parent settles a remote child by itself reports the
// child's earlier complete message (its last heartbeat's selection) with
// a fixed diagnostic naming the cause, and the note that its full log is
// on its worker; it never waits past the grace.
func TestSettlesFromWhatItHolds(t *testing.T) {
	note := "the child's full log is on its worker, under worker session W-1"
	for _, tt := range []struct {
		name string
		// act drives the run after the first heartbeat; far and clk are
		// the run's.
		act  func(t *testing.T, r *Run, cancel context.CancelFunc, clk *clock, lost chan struct{})
		want outcome.Result
		term int32
	}{
		{"the parent cancelled, the grace ran out", func(t *testing.T, r *Run, cancel context.CancelFunc, clk *clock, _ chan struct{}) {
			cancel()
			clk.fire(grace)
		}, outcome.Result{StopReason: outcome.StopAborted, Output: text("first"), Diagnostic: diag(outcome.StopAborted, outcome.CategoryWorkerLost), Note: note}, 1},
		{"the agent's timeout, the grace ran out", func(t *testing.T, r *Run, _ context.CancelFunc, clk *clock, _ chan struct{}) {
			clk.fire(timeout)
			clk.fire(grace)
		}, outcome.Result{StopReason: outcome.StopAborted, Output: text("first"), Diagnostic: diag(outcome.StopAborted, outcome.CategoryTimeout), Note: note}, 1},
		{"job_kill, the grace ran out", func(t *testing.T, r *Run, _ context.CancelFunc, clk *clock, _ chan struct{}) {
			r.Cancel()
			clk.fire(grace)
		}, outcome.Result{StopReason: outcome.StopAborted, Output: text("first"), Diagnostic: diag(outcome.StopAborted, outcome.CategoryWorkerLost), Note: note}, 1},
		{"the helper died under a running child", func(t *testing.T, r *Run, _ context.CancelFunc, _ *clock, lost chan struct{}) {
			close(lost)
		}, outcome.Result{StopReason: outcome.StopError, Output: text("first"), Diagnostic: diag(outcome.StopError, outcome.CategoryEngineUnavailable), Note: note}, 0},
		{"the helper died after a cancel", func(t *testing.T, r *Run, cancel context.CancelFunc, _ *clock, lost chan struct{}) {
			cancel()
			cancelled(t, r)
			close(lost)
		}, outcome.Result{StopReason: outcome.StopAborted, Output: text("first"), Diagnostic: diag(outcome.StopAborted, outcome.CategoryEngineUnavailable), Note: note}, 0},
		{"an error after the cancel (the cluster answered for the child)", func(t *testing.T, r *Run, cancel context.CancelFunc, _ *clock, _ chan struct{}) {
			cancel()
			cancelled(t, r)
			r.Deliver(outcome.Result{StopReason: outcome.StopAborted})
		}, outcome.Result{StopReason: outcome.StopAborted, Output: text("first"), Note: note}, 0},
		{"the timeout's cancel answered without a diagnostic", func(t *testing.T, r *Run, _ context.CancelFunc, clk *clock, _ chan struct{}) {
			clk.fire(timeout)
			cancelled(t, r)
			r.Deliver(outcome.Result{StopReason: outcome.StopAborted})
		}, outcome.Result{StopReason: outcome.StopAborted, Output: text("first"), Diagnostic: diag(outcome.StopAborted, outcome.CategoryTimeout), Note: note}, 0},
		{"the child's own aborted result within the grace", func(t *testing.T, r *Run, cancel context.CancelFunc, _ *clock, _ chan struct{}) {
			cancel()
			cancelled(t, r)
			r.Deliver(outcome.Result{StopReason: outcome.StopAborted, Output: text("its own")})
		}, outcome.Result{StopReason: outcome.StopAborted, Output: text("its own")}, 0},
		{"completed", func(t *testing.T, r *Run, _ context.CancelFunc, _ *clock, _ chan struct{}) {
			r.Deliver(outcome.Result{StopReason: outcome.StopCompleted, Output: text("done")})
		}, outcome.Result{StopReason: outcome.StopCompleted, Output: text("done")}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, clk, lost := &farEnd{}, &clock{}, make(chan struct{})
			r := New(f, Options{Provider: "inprocess", Timeout: timeout, Grace: grace, Lost: lost, Clock: clk})
			r.Progress(text("first"), "W-1")
			r.Progress(nil, "") // a beat before any new message keeps what is held
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan outcome.Result, 1)
			go func() { done <- r.Wait(ctx) }()
			tt.act(t, r, cancel, clk, lost)
			var got outcome.Result
			select {
			case got = <-done:
			case <-time.After(time.Minute):
				t.Fatal("Wait did not return")
			}
			if got.StopReason != tt.want.StopReason || llm.BlocksText(got.Output) != llm.BlocksText(tt.want.Output) ||
				got.Diagnostic != tt.want.Diagnostic || got.Note != tt.want.Note {
				t.Errorf("settled %+v\nwant    %+v", got, tt.want)
			}
			// Terminate is asked in the background: wait for it, boundedly.
			for deadline := time.Now().Add(time.Minute); f.terminates.Load() < tt.term && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			if n := f.terminates.Load(); n != tt.term {
				t.Errorf("%d terminates, want %d", n, tt.term)
			}
			if r.Dispose(); f.cancels.Load() > 1 {
				t.Errorf("%d cancels: the far side is asked once", f.cancels.Load())
			}
		})
	}
}

// A child that sent nothing yet settles with no output and no note; a
// worker session that is not a reins id never reaches the note.
func TestNothingHeld(t *testing.T) {
	f, clk := &farEnd{}, &clock{}
	r := New(f, Options{Grace: grace, Clock: clk})
	r.Progress(nil, "W 1; rm -rf /")
	r.Cancel()
	clk.fire(grace)
	got := r.Wait(context.Background())
	if got.StopReason != outcome.StopAborted || got.Output != nil || got.Note != "" {
		t.Errorf("%+v", got)
	}
	r.Progress(text("x"), "W 1; rm -rf /")
	if n := r.here(outcome.CategoryWorkerLost).Note; strings.Contains(n, "rm") {
		t.Errorf("note %q carries worker text", n)
	}
}

// The heartbeat's selection is bounded by the result cap: whole when it
// fits, else its text cut on a UTF-8 boundary.
func TestBound(t *testing.T) {
	small := text("héllo")
	if got := Bound(small, 1024); llm.BlocksText(got) != "héllo" || len(got) != 1 {
		t.Errorf("%+v", got)
	}
	big := text(strings.Repeat("é", 1000))
	got := Bound(big, 101)
	if s := llm.BlocksText(got); len(s) != 100 || !strings.HasPrefix(strings.Repeat("é", 1000), s) {
		t.Errorf("cut to %d bytes %q", len(s), s)
	}
}

// cancelled waits until Wait has seen the cancel (a deadline it enforces).
func cancelled(t *testing.T, r *Run) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !r.Cancelled(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the run was never cancelled")
		}
	}
}
