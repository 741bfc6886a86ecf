package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tui"
)

// interactiveMain runs the screen (internal/tui) on the terminal in, out
// until the user leaves it or a signal ends it.
func interactiveMain(ctx context.Context, in io.Reader, out, stderr io.Writer, f *cli.InteractiveFlags) error {
	if in, ok := in.(*os.File); ok {
		defer cli.HoldInput(in)()
	}
	h, opts, _, err := cli.OpenSession(stderr, &f.OpenFlags)
	if err != nil {
		return err
	}
	defer h.Close()
	var opened harnesses
	defer opened.close()
	if ctx == nil {
		ctx = context.Background()
	}
	// The screen ends on SIGTERM as on Ctrl-D, and on SIGHUP (the
	// terminal went away) too: the running turn is cancelled and recorded,
	// its processes torn down. The exit status says a signal ended it, as
	// reins run's does.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	var got os.Signal
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case got = <-sigs:
			if got == syscall.SIGHUP {
				cancel() // bubbletea handles SIGTERM itself
			}
		case <-ctx.Done():
			select { // a signal that ended the screen is in sigs already
			case got = <-sigs:
			default:
			}
		}
	}()
	err = tui.Run(ctx, in, out, tui.Options{
		Harness: h, Session: opts, Ask: !f.Yes, BaseURL: f.BaseURL, NoColor: os.Getenv("NO_COLOR") != "",
		Trust: trustQuestion(f, h, &opened),
	})
	cancel()
	<-watched
	if sig, ok := got.(syscall.Signal); ok && err == nil {
		return &cli.ExitError{Code: 128 + int(sig)}
	}
	var inUse *session.InUseError
	if errors.As(err, &inUse) {
		return &cli.ExitError{Code: cli.ExitUsage, Msg: inUse.Error()}
	}
	return err
}
