package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tui"
)

// interactiveFlags are the root command's: the session flags of reins run
// and --yes.
type interactiveFlags struct {
	runFlags
	yes bool
}

// addInteractive makes `reins` with no arguments on a terminal an
// interactive session (internal/tui). Anywhere else (stdin or stdout not a
// terminal) it prints the help on stderr and exits 2: there is no task.
func addInteractive(root *cobra.Command, s *streams) {
	var f interactiveFlags
	root.Long = root.Short + ".\n\nWith no command, on a terminal, reins opens an interactive session\n(Enter sends, /help lists commands, Ctrl-D exits); reins run runs one task headless."
	root.Args = cobra.NoArgs
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if !isTTY(s.in) || !isTTY(s.out) {
			cmd.SetOut(s.err)
			cmd.Help()
			return &exitError{code: exitUsage}
		}
		return interactiveMain(cmd.Context(), s, &f)
	}
	fl := root.Flags()
	f.sessionFlags.register(fl, "workspace directory (default: the current directory)")
	fl.StringVar(&f.agentName, "agent", "", "run as this agent definition")
	fl.IntVar(&f.maxTokens, "max-tokens", 0, "most output tokens per model request (0: the provider's default)")
	fl.StringVar(&f.resume, "resume", "", "continue this session (any unique id prefix), in its workspace unless --cwd")
	fl.BoolVarP(&f.cont, "continue", "c", false, "continue the latest session of the workspace")
	fl.BoolVarP(&f.yes, "yes", "y", false, "do not ask before write, edit and bash (--permission stays the ceiling)")
}

// isTTY reports whether v is a terminal: a file that answers the
// terminal ioctl (isTerminal's character-device test is true of /dev/null).
func isTTY(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

func interactiveMain(ctx context.Context, s *streams, f *interactiveFlags) error {
	if in, ok := s.in.(*os.File); ok {
		defer holdInput(in)()
	}
	h, opts, _, err := openSession(s, &f.runFlags)
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
	err = tui.Run(ctx, s.in, s.out, tui.Options{
		Harness: h, Session: opts, Ask: !f.yes, BaseURL: f.baseURL, NoColor: os.Getenv("NO_COLOR") != "",
		Trust: trustQuestion(s, f, h, &opened),
	})
	cancel()
	<-watched
	if sig, ok := got.(syscall.Signal); ok && err == nil {
		return &exitError{code: 128 + int(sig)}
	}
	var inUse *session.InUseError
	if errors.As(err, &inUse) {
		return &exitError{code: exitUsage, msg: inUse.Error()}
	}
	return err
}
