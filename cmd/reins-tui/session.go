package main

import (
	"context"
	"errors"
	"io"
	"os"
	"syscall"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tui"
)

// interactiveMain runs the screen (internal/tui) on the terminal in, out
// until the user leaves it or a signal ends it; first, when set, is sent
// as the first input (a task, or /resume).
func interactiveMain(ctx context.Context, in io.Reader, out, stderr io.Writer, f *cli.InteractiveFlags, first string) error {
	if in, ok := in.(*os.File); ok {
		defer cli.HoldInput(in)()
	}
	if ctx == nil {
		ctx = context.Background()
	}
	h, opts, err := openApproving(ctx, in, stderr, &f.OpenFlags)
	if err != nil {
		return err
	}
	defer h.Close()
	// Before the screen takes the terminal, not at the first process.
	h.SandboxNoticeNow(stderr)
	var opened harnesses
	defer opened.close()
	if ctx == nil {
		ctx = context.Background()
	}
	// The screen ends on SIGTERM as on Ctrl-D, and on SIGHUP (the
	// terminal went away) too: the running turn is cancelled and recorded,
	// its processes torn down. The exit status says a signal ended it, as
	// reins run's does.
	ctx, sigs := cli.WatchSignals(ctx, context.Canceled, func(sig os.Signal) bool {
		return sig == syscall.SIGHUP // bubbletea handles SIGTERM itself
	}, syscall.SIGTERM, syscall.SIGHUP)
	defer sigs.Stop()
	err = tui.Run(ctx, in, out, tui.Options{
		Harness: h, Session: opts, Ask: !f.Yes, BaseURL: f.BaseURL, NoColor: os.Getenv("NO_COLOR") != "",
		Trust: trustQuestion(f, h, &opened), Prompt: first,
	})
	got := sigs.Stop()
	if sig, ok := got.(syscall.Signal); ok && err == nil {
		return &cli.ExitError{Code: 128 + int(sig)}
	}
	var inUse *session.InUseError
	if errors.As(err, &inUse) {
		return &cli.ExitError{Code: cli.ExitUsage, Msg: inUse.Error()}
	}
	return err
}
