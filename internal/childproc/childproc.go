// Package childproc is the one child lifecycle shared by the providers
// that run a child process (acp, pi, reins; docs/subagents.md, "Child
// processes"), and by the in-process provider where it applies: how a
// child's environment is made (the tail of its stderr is proc.Tail), and
// the run's lifetime (Lifetime): the agent's timeout counted from the
// spawn, the cause that ended the run, the body whose return
// settles it, the wait that a parent's cancellation turns into a cancel,
// and the once-only disposal that returns only when the run settled and
// its resources are released. Each was written three or four times before,
// and the copies disagreed.
package childproc

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Environ is the environment of a child: base (the parent's), without the
// variables extra sets, then extra's variables in sorted key order. Every
// key occurs once, so no program can read the parent's value by taking the
// first match.
func Environ(base []string, extra map[string]string) []string {
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := extra[k]; !over {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		out = append(out, k+"="+extra[k])
	}
	return out
}

// Lifetime is a run's lifetime — of every provider's runs, the in-process
// one's too: a context cancelled with the cause that ended the run first
// (local cancel, parent cancel, timeout, dispose); the agent's timeout,
// which counts from the spawn (Start), the start included; the run's body
// (Go), whose return settles the run; and its disposal (Dispose), once.
type Lifetime struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	began  time.Time
	done   chan struct{}
	stall  stall
	// hurried: the child is owed no more grace (Hurry).
	hurried atomic.Bool

	disposal Once
}

// Start begins a lifetime: after timeout (when > 0) it ends with
// timeoutCause.
func Start(timeout time.Duration, timeoutCause error) *Lifetime {
	l := &Lifetime{began: time.Now(), done: make(chan struct{})}
	l.ctx, l.cancel = context.WithCancelCause(context.Background())
	if timeout > 0 {
		l.timer = time.AfterFunc(timeout, func() { l.cancel(timeoutCause) })
	}
	return l
}

// Context is cancelled when the lifetime ends.
func (l *Lifetime) Context() context.Context { return l.ctx }

// End ends the lifetime with cause; the first cause stays. A cause that
// says the wall clock is spent hurries the teardown (Hurried).
func (l *Lifetime) End(cause error) {
	if outOfTime(cause) {
		l.hurried.Store(true)
	}
	l.cancel(cause)
}

// wallClock is how a cause says the tree's time is up without this
// package importing the budget: budget.Exhausted of kind time.
type wallClock interface{ WallClockSpent() bool }

func outOfTime(err error) bool {
	var w wallClock
	return errors.As(err, &w) && w.WallClockSpent()
}

// Hurry records that the child is owed no more grace: it let a cancel go
// unanswered for the cancel grace (its stdin is closed already; the grace
// was given).
func (l *Lifetime) Hurry() { l.hurried.Store(true) }

// Hurried reports whether the teardown skips the graces and starts at
// SIGTERM (proc.Ladder.Unresponsive): the child stalled, the time budget
// of the run (--timeout, budget.time) is spent — waiting for a polite
// exit would overrun the wall time the user set — or it left a cancel
// unanswered (Hurry). This is the one place that rule lives; every
// provider asks here before it picks its ladder and its cancel grace.
func (l *Lifetime) Hurried() bool { return l.Stalled() || l.hurried.Load() }

// Cause is the cause that ended the lifetime, nil while it lasts.
func (l *Lifetime) Cause() error { return context.Cause(l.ctx) }

// StopTimer stops the timeout and the stall watch (the run settled or is
// being torn down).
func (l *Lifetime) StopTimer() {
	if l.timer != nil {
		l.timer.Stop()
	}
	l.stopStall()
}

// Abandon ends the lifetime of a run that was never published (its start
// failed): the timer stops and the context ends.
func (l *Lifetime) Abandon() {
	l.StopTimer()
	l.End(nil)
}

// Elapsed is the time since the spawn.
func (l *Lifetime) Elapsed() time.Duration { return time.Since(l.began) }

// Go runs the run's body in a goroutine of its own. The run has settled
// when body returns: the timeout stops (a settled run cannot time out) and
// Done is closed, so whatever body stored is visible to those who waited
// for it. Go is called once, when the run is published.
func (l *Lifetime) Go(body func()) {
	go func() {
		defer close(l.done)
		defer l.StopTimer()
		body()
	}()
}

// Done is closed when the run settled: the body given to Go returned.
func (l *Lifetime) Done() <-chan struct{} { return l.done }

// Wait blocks until the run settled. When ctx ends first, the lifetime ends
// with parentCause (the parent cancelled the run) and Wait still waits: a
// run always settles before anyone reads its result.
func (l *Lifetime) Wait(ctx context.Context, parentCause error) {
	select {
	case <-l.done:
	case <-ctx.Done():
		if outOfTime(context.Cause(ctx)) {
			l.hurried.Store(true)
		}
		l.End(parentCause)
		<-l.done
	}
}

// Dispose disposes of the run once: it ends the lifetime with cause (a run
// still going is cancelled), waits until the run settled, then releases
// what the run holds with release (nil releases nothing). Every call, the
// concurrent ones too, returns only when that is done, with release's
// error. The run must have been published (Go called).
func (l *Lifetime) Dispose(cause error, release func() error) error {
	return l.disposal.Do(func() error {
		l.End(cause)
		<-l.done
		l.StopTimer()
		if release == nil {
			return nil
		}
		return release()
	})
}

// Once runs a release (a teardown, a close) once and remembers its error:
// what makes a provider's Dispose idempotent. The zero Once is ready.
type Once struct {
	once sync.Once
	err  error
}

// Do runs f on the first call and returns its error to every call. A call
// made while f runs (from another goroutine) returns when f has returned;
// a call from inside f deadlocks.
func (o *Once) Do(f func() error) error {
	o.once.Do(func() { o.err = f() })
	return o.err
}
