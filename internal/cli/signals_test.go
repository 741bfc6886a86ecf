//go:build unix

package cli

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestWatchSignals: the first watched signal cancels the context with the
// cause unless cancelOn declines it; Stop says which signal came, and
// ends the context in every case.
func TestWatchSignals(t *testing.T) {
	cause := errors.New("stopped by a signal")
	cases := []struct {
		name     string
		send     bool
		cancelOn func(os.Signal) bool
		cancels  bool
	}{
		{"cancels", true, nil, true},
		{"declined", true, func(os.Signal) bool { return false }, false},
		{"none", false, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, s := WatchSignals(context.Background(), cause, c.cancelOn, syscall.SIGUSR1)
			if c.send {
				if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
					t.Fatal(err)
				}
				arrived(t, s)
			}
			if c.cancels {
				select {
				case <-ctx.Done():
				case <-time.After(20 * time.Second):
					t.Fatal("the signal did not cancel the context")
				}
				if got := context.Cause(ctx); got != cause {
					t.Errorf("cause %v, want %v", got, cause)
				}
			} else if ctx.Err() != nil {
				t.Fatalf("context ended before Stop: %v", context.Cause(ctx))
			}
			got := s.Stop()
			if c.send && got != syscall.SIGUSR1 || !c.send && got != nil {
				t.Errorf("Stop() = %v, sent=%v", got, c.send)
			}
			if ctx.Err() == nil {
				t.Error("the context outlived Stop")
			}
			if again := s.Stop(); again != got {
				t.Errorf("a second Stop() = %v, the first %v", again, got)
			}
		})
	}
}

// arrived waits, with a generous bound, until s has the signal (recorded
// or queued for Stop's drain).
func arrived(t *testing.T, s *Signals) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		s.mu.Lock()
		got := s.got
		s.mu.Unlock()
		if got != nil || len(s.ch) > 0 {
			return
		}
	}
	t.Fatal("the signal never reached the watch")
}

// TestWatchServing: a server's watch ends its context at SIGTERM with
// context.Canceled, and ServedExit makes the signal the exit status.
func TestWatchServing(t *testing.T) {
	ctx, s := WatchServing(nil) //nolint:staticcheck // nil is Background, as the servers pass it
	defer s.Stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	arrived(t, s)
	select {
	case <-ctx.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("SIGTERM did not end the server's context")
	}
	if got := context.Cause(ctx); got != context.Canceled {
		t.Errorf("cause %v", got)
	}
	var ee *ExitError
	if err := ServedExit(s.Stop()); !errors.As(err, &ee) || ee.Code != 128+int(syscall.SIGTERM) {
		t.Errorf("ServedExit = %v", err)
	}
	for _, c := range []struct {
		sig  os.Signal
		code int
	}{{os.Interrupt, ExitInterrupt}, {nil, -1}} {
		err := ServedExit(c.sig)
		if c.code < 0 {
			if err != nil {
				t.Errorf("ServedExit(nil) = %v", err)
			}
		} else if !errors.As(err, &ee) || ee.Code != c.code {
			t.Errorf("ServedExit(%v) = %v", c.sig, err)
		}
	}
}
