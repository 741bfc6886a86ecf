package tui

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/tui/typeahead"
)

// printer sends committed text to the terminal above the live screen, in
// the order it was committed. The model must never block on it (the
// program's event loop is the one that prints), so commit only queues;
// one goroutine joins whatever is queued into one Println.
type printer struct {
	mu   sync.Mutex
	text []string
	wake chan struct{}
}

func newPrinter() *printer { return &printer{wake: make(chan struct{}, 1)} }

func (p *printer) push(s string) {
	p.mu.Lock()
	p.text = append(p.text, s)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *printer) take() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := strings.Join(p.text, "\n")
	p.text = nil
	return s
}

// loop prints until done is closed, then prints what is left to out
// directly (the program has stopped drawing).
func (p *printer) loop(prog *tea.Program, done <-chan struct{}) {
	for {
		select {
		case <-p.wake:
			if s := p.take(); s != "" {
				// Send, unlike Println, returns once the program has
				// stopped rather than block forever.
				prog.Send(tea.Println(s)())
			}
		case <-done:
			return
		}
	}
}

// Run runs the interactive session on a terminal (in, out) until the user
// exits, then cancels a running turn, waits for it and closes the
// session: nothing it started outlives it.
func Run(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	pr := newPrinter()
	if f, ok := in.(*os.File); ok && opts.FlushInput == nil && term.IsTerminal(f.Fd()) {
		opts.FlushInput = typeahead.Flush(f.Fd())
		if opts.PendingInput == nil {
			opts.PendingInput = typeahead.Pending(f.Fd())
		}
	}
	m, err := New(opts, pr.push)
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
		pr.loop(prog, done)
	}()
	_, runErr := prog.Run()
	close(done)
	wg.Wait()
	// Committed text the program had no frame left to print.
	if s := pr.take(); s != "" {
		io.WriteString(out, s+"\n")
	}
	closeErr := m.Close()
	// Where the conversation is, for the next time.
	fmt.Fprintf(out, "session %s · continue it with: reins --resume %s\n", m.root, shortID(m.root))
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
	m.feed.close()
	m.stopShell()
	m.wg.Wait()
	return m.sess.Close()
}
