package childproc

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// ErrStalled is the cause that ends a lifetime whose child sent nothing
// for its stall timeout (WatchStall). It says so by its LivenessTimeout
// method, which is how the agent loop tells it from a user's cancel
// without importing this package.
var ErrStalled error = stalledError{}

type stalledError struct{}

func (stalledError) Error() string {
	return "child stalled: no protocol message within the stall timeout"
}

// LivenessTimeout marks the cause as a liveness timeout (agent.AbortedBy).
func (stalledError) LivenessTimeout() {}

// stall is a lifetime's liveness watch: the time of the child's last
// protocol message and the timer that checks it.
type stall struct {
	last  atomic.Int64 // unix nanoseconds of the last Progress
	mu    sync.Mutex
	timer *time.Timer
	fired atomic.Bool
	// waiting, when set, says whether the child is now waiting on
	// something that must show progress (an in-process child's model
	// request); while it says no, silence is not a stall.
	waiting func() bool
}

// StallOnlyWhile limits the stall watch to the times waiting reports true:
// an in-process child is stalled only while its model request makes no
// progress, not while its tools run or it waits for its jobs. Call it
// before WatchStall.
func (l *Lifetime) StallOnlyWhile(waiting func() bool) { l.stall.waiting = waiting }

// Progress records that the child sent a protocol message: any message
// counts (an update, a response, a request, a notification), so a child
// that is working is never taken for stalled. It is cheap, and safe to
// call from any goroutine, before or without WatchStall.
func (l *Lifetime) Progress() { l.stall.last.Store(time.Now().UnixNano()) }

// WatchStall ends the lifetime with ErrStalled when the child sends no
// protocol message for d, counted from this call or from the last
// Progress. onStall (nil: none) runs first, once: a background job's
// parent hears that the job is stalled before it is stopped. A d <= 0
// watches nothing. The watch ends when the run settles.
func (l *Lifetime) WatchStall(d time.Duration, onStall func()) {
	if d <= 0 {
		return
	}
	l.Progress()
	var check func()
	check = func() {
		select {
		case <-l.done:
			return
		default:
		}
		idle := time.Since(time.Unix(0, l.stall.last.Load()))
		if w := l.stall.waiting; w != nil && !w() {
			idle = 0 // not waiting on anything: look again in d
		}
		if idle < d {
			l.stall.mu.Lock()
			l.stall.timer = time.AfterFunc(d-idle, check)
			l.stall.mu.Unlock()
			return
		}
		if l.stall.fired.Swap(true) {
			return
		}
		if onStall != nil && l.Cause() == nil {
			onStall()
		}
		l.End(ErrStalled)
	}
	l.stall.mu.Lock()
	l.stall.timer = time.AfterFunc(d, check)
	l.stall.mu.Unlock()
}

// stopStall stops the watch (the run settled or is being torn down).
func (l *Lifetime) stopStall() {
	l.stall.mu.Lock()
	defer l.stall.mu.Unlock()
	if l.stall.timer != nil {
		l.stall.timer.Stop()
	}
}

// Stalled reports whether the stall watch ended the lifetime.
func (l *Lifetime) Stalled() bool { return errors.Is(l.Cause(), ErrStalled) }
