// Package childproc is the one child lifecycle shared by the providers
// that run a child process (acp, pi, reins; docs/subagents.md, "Child
// processes"): how a child's environment is made, how the tail of its
// stderr is kept for the host log, and the run's lifetime (the agent's
// timeout counted from the spawn, the cause that ended the run, the wait
// that a parent's cancellation turns into a cancel). Each was written three
// or four times before, and the copies disagreed.
package childproc

import (
	"context"
	"slices"
	"strings"
	"sync"
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

// Tail keeps the last Max bytes written to it (a child's stderr, for the
// host log). It is safe for concurrent use; the zero Max keeps 4 KiB.
type Tail struct {
	Max int

	mu  sync.Mutex
	buf []byte
}

// DefaultTailBytes is a Tail's size when Max is zero.
const DefaultTailBytes = 4 << 10

// Write never fails.
func (t *Tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	limit := t.Max
	if limit <= 0 {
		limit = DefaultTailBytes
	}
	if len(b) >= limit {
		t.buf = append(t.buf[:0], b[len(b)-limit:]...)
		return len(b), nil
	}
	if over := len(t.buf) + len(b) - limit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, b...)
	return len(b), nil
}

// String is the tail so far.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// Lifetime is a run's lifetime — of every provider's runs, the in-process
// one's too: a context cancelled with the cause that
// ended the run first (local cancel, parent cancel, timeout, dispose), and
// the agent's timeout, which counts from the spawn (Start), the start
// included.
type Lifetime struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	began  time.Time
}

// Start begins a lifetime: after timeout (when > 0) it ends with
// timeoutCause.
func Start(timeout time.Duration, timeoutCause error) *Lifetime {
	l := &Lifetime{began: time.Now()}
	l.ctx, l.cancel = context.WithCancelCause(context.Background())
	if timeout > 0 {
		l.timer = time.AfterFunc(timeout, func() { l.cancel(timeoutCause) })
	}
	return l
}

// Context is cancelled when the lifetime ends.
func (l *Lifetime) Context() context.Context { return l.ctx }

// End ends the lifetime with cause; the first cause stays.
func (l *Lifetime) End(cause error) { l.cancel(cause) }

// Cause is the cause that ended the lifetime, nil while it lasts.
func (l *Lifetime) Cause() error { return context.Cause(l.ctx) }

// StopTimer stops the timeout (the run settled or is being torn down).
func (l *Lifetime) StopTimer() {
	if l.timer != nil {
		l.timer.Stop()
	}
}

// Elapsed is the time since the spawn.
func (l *Lifetime) Elapsed() time.Duration { return time.Since(l.began) }

// Wait blocks until done is closed. When ctx ends first, the lifetime ends
// with parentCause (the parent cancelled the run) and Wait still waits for
// done: a run always settles before anyone reads its result.
func (l *Lifetime) Wait(ctx context.Context, done <-chan struct{}, parentCause error) {
	select {
	case <-done:
	case <-ctx.Done():
		l.End(parentCause)
		<-done
	}
}
