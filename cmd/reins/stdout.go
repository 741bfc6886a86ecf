package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// A closed stdout (`reins run --stream-json | head -1`, `reins log | true`)
// is a runtime failure like any other: the command ends the way it ends on
// an error — a run as aborted, its session log closed with turn/end — and
// exits 1 (docs/cli.md, "Exit status"), never dies of SIGPIPE (141) with a
// log cut short. Two parts make that one rule: SIGPIPE is caught, so a
// write to the broken pipe returns EPIPE instead of killing reins; and the
// first failed write to stdout is remembered, so a command that went on
// as if it had written (a listing ignores Fprintf's error) still exits 1.

var sigpipeOnce sync.Once

// catchSIGPIPE makes a write to a closed stdout or stderr return EPIPE
// (the Go runtime kills the process on fd 1 and 2 only while SIGPIPE is not
// notified). A caught signal, unlike an ignored one, is reset to the
// default in every process reins starts, so `yes | head` in a bash tool
// still ends as it should.
func catchSIGPIPE() {
	sigpipeOnce.Do(func() {
		// Nobody reads c: the runtime drops a signal a full channel cannot
		// take, and no goroutine has to outlive the command for it.
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	})
}

// watchedWriter passes writes through to w and keeps the first error.
type watchedWriter struct {
	w   interface{ Write([]byte) (int, error) }
	mu  sync.Mutex
	err error
}

func (w *watchedWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		w.mu.Lock()
		if w.err == nil {
			w.err = err
		}
		w.mu.Unlock()
	}
	return n, err
}

// failed returns the first write error, if any.
func (w *watchedWriter) failed() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
