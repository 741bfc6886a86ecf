package cli

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/reinsdev/reins/internal/termsafe"
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

// CatchSIGPIPE makes a write to a closed stdout or stderr return EPIPE
// (the Go runtime kills the process on fd 1 and 2 only while SIGPIPE is not
// notified). A caught signal, unlike an ignored one, is reset to the
// default in every process reins starts, so `yes | head` in a bash tool
// still ends as it should.
func CatchSIGPIPE() {
	sigpipeOnce.Do(func() {
		// Nobody reads c: the runtime drops a signal a full channel cannot
		// take, and no goroutine has to outlive the command for it.
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	})
}

// WatchedWriter passes writes through to w and keeps the first error.
type WatchedWriter struct {
	W   interface{ Write([]byte) (int, error) }
	mu  sync.Mutex
	err error
}

func (w *WatchedWriter) Write(p []byte) (int, error) {
	n, err := w.W.Write(p)
	if err != nil {
		w.mu.Lock()
		if w.err == nil {
			w.err = err
		}
		w.mu.Unlock()
	}
	return n, err
}

// Failed returns the first write error, if any.
func (w *WatchedWriter) Failed() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// WatchStdout returns the writer a command writes its stdout to: w itself
// on a terminal (the interactive screen and the streamed answer need the
// *os.File), else w watched. Ended tells whether a write failed.
func WatchStdout(w io.Writer) (io.Writer, *WatchedWriter) {
	if IsTerminal(w) {
		return w, nil
	}
	ww := &WatchedWriter{W: w}
	return ww, ww
}

// Ended is a command's exit status once it returned no error: ExitOK, or
// ExitFailed with one line on stderr when a write to stdout failed.
func (w *WatchedWriter) Ended(stderr io.Writer) int {
	if err := w.Failed(); err != nil {
		fmt.Fprintln(stderr, "reins: writing to stdout: "+termsafe.Escape(err.Error()))
		return ExitFailed
	}
	return ExitOK
}
