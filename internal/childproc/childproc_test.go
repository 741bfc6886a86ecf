package childproc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestEnviron(t *testing.T) {
	got := Environ([]string{"A=parent", "B=2", "A=again", "C=3"}, map[string]string{"C": "child", "A": "child"})
	want := []string{"B=2", "A=child", "C=child"}
	if !slices.Equal(got, want) {
		t.Errorf("Environ = %q, want %q", got, want)
	}
	if got := Environ([]string{"X=1"}, nil); !slices.Equal(got, []string{"X=1"}) {
		t.Errorf("no extra: %q", got)
	}
}

func TestLifetime(t *testing.T) {
	errTimeout, errParent := errors.New("timeout"), errors.New("parent")
	l := Start(20*time.Millisecond, errTimeout)
	<-l.Context().Done()
	if l.Cause() != errTimeout {
		t.Errorf("cause = %v", l.Cause())
	}
	l.End(errParent) // the first cause stays
	if l.Cause() != errTimeout {
		t.Errorf("cause = %v", l.Cause())
	}

	l = Start(0, errTimeout)
	ctx, cancel := context.WithCancel(context.Background())
	l.Go(func() { <-l.Context().Done() })
	cancel()
	l.Wait(ctx, errParent)
	if l.Cause() != errParent {
		t.Errorf("cause = %v", l.Cause())
	}
}

// TestLifetimeGo: the run settles when its body returns; the timeout stops
// then, and what the body stored is visible after Wait.
func TestLifetimeGo(t *testing.T) {
	errTimeout := errors.New("timeout")
	l := Start(50*time.Millisecond, errTimeout)
	var res string
	l.Go(func() { res = "settled" })
	l.Wait(context.Background(), errors.New("parent"))
	if res != "settled" {
		t.Errorf("res = %q", res)
	}
	select {
	case <-l.Done():
	default:
		t.Error("Done not closed after Wait")
	}
	time.Sleep(100 * time.Millisecond)
	if l.Cause() != nil {
		t.Errorf("a settled run timed out: cause = %v", l.Cause())
	}

	l = Start(time.Hour, errTimeout)
	l.Abandon()
	if l.Context().Err() == nil {
		t.Error("Abandon left the context alive")
	}
}

func TestLifetimeDispose(t *testing.T) {
	errDisposed, errRelease := errors.New("disposed"), errors.New("release failed")
	tests := []struct {
		name    string
		body    func(l *Lifetime) // the run's body
		release func() error      // nil: nothing to release
		cancel  error             // a cause that ended the run before Dispose
		settled bool              // the run settled before Dispose
		want    error             // what every Dispose returns
		cause   error             // the lifetime's cause afterwards
	}{
		{name: "running run is cancelled", body: func(l *Lifetime) { <-l.Context().Done() }, release: func() error { return nil }, cause: errDisposed},
		{name: "release error kept", body: func(l *Lifetime) { <-l.Context().Done() }, release: func() error { return errRelease }, want: errRelease, cause: errDisposed},
		{name: "nil release", body: func(l *Lifetime) { <-l.Context().Done() }, cause: errDisposed},
		{name: "settled run", body: func(*Lifetime) {}, release: func() error { return errRelease }, settled: true, want: errRelease, cause: errDisposed},
		{name: "earlier cause stays", body: func(l *Lifetime) { <-l.Context().Done() }, release: func() error { return nil }, cancel: context.Canceled, cause: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := Start(0, nil)
			var settled atomic.Bool
			l.Go(func() {
				tt.body(l)
				time.Sleep(10 * time.Millisecond) // a slow settle: Dispose must wait for it
				settled.Store(true)
			})
			if tt.cancel != nil {
				l.End(tt.cancel)
			}
			if tt.settled {
				<-l.Done()
			}
			var runs atomic.Int32
			release := tt.release
			if release != nil {
				release = func() error {
					runs.Add(1)
					if !settled.Load() {
						t.Error("release ran before the run settled")
					}
					time.Sleep(10 * time.Millisecond) // concurrent callers wait for this
					return tt.release()
				}
			}
			const callers = 8
			errs := make([]error, callers)
			var wg sync.WaitGroup
			for i := range callers {
				wg.Go(func() {
					errs[i] = l.Dispose(errDisposed, release)
					if !settled.Load() {
						t.Error("Dispose returned before the run settled")
					}
				})
			}
			wg.Wait()
			for i, err := range errs {
				if err != tt.want {
					t.Errorf("Dispose #%d = %v, want %v", i, err, tt.want)
				}
			}
			if err := l.Dispose(errDisposed, release); err != tt.want {
				t.Errorf("a later Dispose = %v, want %v", err, tt.want)
			}
			if release != nil && runs.Load() != 1 {
				t.Errorf("release ran %d times", runs.Load())
			}
			if l.Cause() != tt.cause {
				t.Errorf("cause = %v, want %v", l.Cause(), tt.cause)
			}
		})
	}
}

func TestOnce(t *testing.T) {
	errA := errors.New("a")
	tests := []struct {
		name string
		err  error
	}{
		{"nil", nil},
		{"error", errA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				o    Once
				runs atomic.Int32
				wg   sync.WaitGroup
			)
			errs := make([]error, 16)
			for i := range errs {
				wg.Go(func() {
					errs[i] = o.Do(func() error {
						runs.Add(1)
						time.Sleep(5 * time.Millisecond)
						return tt.err
					})
				})
			}
			wg.Wait()
			if n := runs.Load(); n != 1 {
				t.Errorf("f ran %d times", n)
			}
			for i, err := range errs {
				if err != tt.err {
					t.Errorf("Do #%d = %v, want %v", i, err, tt.err)
				}
			}
			if err := o.Do(func() error { t.Error("f ran again"); return nil }); err != tt.err {
				t.Errorf("a later Do = %v", err)
			}
		})
	}
}

// spentClock is a cause that says the wall clock is spent, as
// budget.Exhausted of kind time does.
type spentClock bool

func (spentClock) Error() string          { return "time's up" }
func (s spentClock) WallClockSpent() bool { return bool(s) }

func TestHurried(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(l *Lifetime)
		want bool
	}{
		{"a local cancel", func(l *Lifetime) { l.End(errors.New("cancelled")) }, false},
		{"a token budget", func(l *Lifetime) { l.End(spentClock(false)) }, false},
		{"the time budget, as the cause", func(l *Lifetime) { l.End(fmt.Errorf("run: %w", spentClock(true))) }, true},
		{"the time budget, through the parent's context", func(l *Lifetime) {
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(spentClock(true))
			l.Wait(ctx, errors.New("parent cancelled"))
		}, true},
		{"an unanswered cancel", func(l *Lifetime) { l.Hurry(); l.End(errors.New("cancelled")) }, true},
		{"a stall", func(l *Lifetime) { l.End(ErrStalled) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := Start(0, nil)
			l.Go(func() { <-l.Context().Done() })
			tc.end(l)
			<-l.Done()
			if got := l.Hurried(); got != tc.want {
				t.Errorf("Hurried() = %v, want %v", got, tc.want)
			}
		})
	}
}
