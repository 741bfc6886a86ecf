// Package scrollback sends the interactive screen's finished text (the
// committed answers, tool blocks and reins's own lines) to the terminal
// above the live part of the screen, in the order it was committed.
package scrollback

import (
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
)

// Printer sends committed text to the terminal above the live screen, in
// the order it was committed. The model must never block on it (the
// program's event loop is the one that prints), so commit only queues;
// one goroutine joins whatever is queued into one Println.
type Printer struct {
	mu   sync.Mutex
	text []string
	wake chan struct{}
}

// New is a printer with nothing queued.
func New() *Printer { return &Printer{wake: make(chan struct{}, 1)} }

// Push queues s; it never blocks.
func (p *Printer) Push(s string) {
	p.mu.Lock()
	p.text = append(p.text, s)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Take is everything queued, joined by newlines, and empties the queue.
func (p *Printer) Take() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := strings.Join(p.text, "\n")
	p.text = nil
	return s
}

// Loop prints until done is closed, then prints what is left to out
// directly (the program has stopped drawing).
func (p *Printer) Loop(prog *tea.Program, done <-chan struct{}) {
	for {
		select {
		case <-p.wake:
			if s := p.Take(); s != "" {
				// Send, unlike Println, returns once the program has
				// stopped rather than block forever.
				prog.Send(tea.Println(s)())
			}
		case <-done:
			return
		}
	}
}
