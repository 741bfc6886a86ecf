package tui

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/tui/scrollback"
	"github.com/reinsdev/reins/internal/tui/sessionlist"
	"github.com/reinsdev/reins/internal/tui/typeahead"
)

// Run runs the interactive session on a terminal (in, out) until the user
// exits, then cancels a running turn, waits for it and closes the
// session: nothing it started outlives it.
func Run(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	pr := scrollback.New()
	if f, ok := in.(*os.File); ok && opts.FlushInput == nil && term.IsTerminal(f.Fd()) {
		opts.FlushInput = typeahead.Flush(f.Fd())
		if opts.PendingInput == nil {
			opts.PendingInput = typeahead.Pending(f.Fd())
		}
	}
	if f, ok := out.(*os.File); ok && opts.Width == 0 && term.IsTerminal(f.Fd()) {
		if w, _, err := term.GetSize(f.Fd()); err == nil {
			opts.Width = w
		}
	}
	m, err := New(opts, pr.Push)
	if err != nil {
		return err
	}
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out)}
	prog := tea.NewProgram(m, popts...)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		pr.Loop(prog, done)
	}()
	_, runErr := prog.Run()
	close(done)
	wg.Wait()
	// Committed text the program had no frame left to print.
	if s := pr.Take(); s != "" {
		io.WriteString(out, s+"\n")
	}
	closeErr := m.Close()
	// Where the conversation is, for the next time.
	fmt.Fprintf(out, "session %s · continue it with: reins --resume %s\n", m.root, sessionlist.ShortID(m.root))
	if runErr != nil && ctx.Err() == nil {
		return runErr
	}
	return closeErr
}

// Close cancels a running turn (recorded as aborted by the user), waits
// for it, refuses pending approvals and closes the session.
func (m *Model) Close() error {
	if m.cancel != nil {
		m.cancel(agent.ErrAbortedByUser)
	}
	m.feed.Close()
	m.stopShell()
	m.wg.Wait()
	return m.sess.Close()
}
