package cli

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Signals watches the signals that end a command (reins run, batch, acp,
// the interactive terminal): the first one cancels the command's context,
// and Stop says which arrived, for the exit status. One watcher, so every
// command answers a signal the same way.
type Signals struct {
	ch      chan os.Signal
	stop    chan struct{}
	done    chan struct{}
	stopped sync.Once

	mu  sync.Mutex
	got os.Signal

	// pipe handles SIGPIPE for a server (WatchServing); nil otherwise.
	pipe chan os.Signal
}

// WatchSignals returns a child of ctx that ends with cause at the first
// of sigs for which cancelOn is true (nil: every one), and the watch. A
// signal that does not cancel is still recorded: its owner (Bubble Tea
// for SIGTERM) ends the command its own way.
func WatchSignals(ctx context.Context, cause error, cancelOn func(os.Signal) bool, sigs ...os.Signal) (context.Context, *Signals) {
	ctx, cancel := context.WithCancelCause(ctx)
	s := &Signals{ch: make(chan os.Signal, 2), stop: make(chan struct{}), done: make(chan struct{})}
	signal.Notify(s.ch, sigs...)
	go func() {
		defer close(s.done)
		defer cancel(nil)
		select {
		case sig := <-s.ch:
			s.record(sig)
			if cancelOn == nil || cancelOn(sig) {
				cancel(cause)
			}
			<-s.stop
		case <-s.stop:
		}
	}()
	return ctx, s
}

// WatchServing is the watch of a server on standard input and output
// (reins acp, mcp-serve): SIGINT and SIGTERM end ctx (nil: Background)
// with context.Canceled, and SIGPIPE is handled until Stop: a client that
// goes away mid-turn must not kill reins before its children are torn
// down and the log closed; a handled SIGPIPE makes writes to the closed
// stdout fail instead. (Handled, not ignored: an ignored signal would be
// inherited by the commands the bash tool runs.)
func WatchServing(ctx context.Context) (context.Context, *Signals) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, s := WatchSignals(ctx, context.Canceled, nil, os.Interrupt, syscall.SIGTERM)
	s.pipe = make(chan os.Signal, 1)
	signal.Notify(s.pipe, syscall.SIGPIPE)
	return ctx, s
}

// ServedExit is the exit of a server that a signal ended (Stop's): the
// interrupt status for SIGINT, 128+15 for SIGTERM, nil for none.
func ServedExit(got os.Signal) error {
	switch got {
	case os.Interrupt:
		return &ExitError{Code: ExitInterrupt}
	case syscall.SIGTERM:
		return &ExitError{Code: 128 + int(syscall.SIGTERM)}
	}
	return nil
}

func (s *Signals) record(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.got == nil {
		s.got = sig
	}
}

// Stop ends the watch and returns the first signal that arrived (nil:
// none), counting one that arrived as the command was ending. The
// watched context ends with it. Later calls return the same signal, so
// a command defers Stop against early returns and calls it where the
// signal decides its exit status.
func (s *Signals) Stop() os.Signal {
	s.stopped.Do(func() {
		if s.pipe != nil {
			signal.Stop(s.pipe)
		}
		signal.Stop(s.ch)
		close(s.stop)
		<-s.done
		select {
		case sig := <-s.ch:
			s.record(sig)
		default:
		}
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got
}
