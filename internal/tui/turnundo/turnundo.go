// Package turnundo is the interactive screen's side of /undo and
// /rewind (issue 30 item 7): the undo history (internal/undo), opened at
// the first turn; each prompt's entry begun on the turn's goroutine and
// waited for at its end; what a restore says; the list /rewind shows;
// and the conversation before a turn, which /rewind forks from.
package turnundo

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/termtext"
	"github.com/reinsdev/reins/internal/undo"
)

// Wait bounds one snapshot or restore (git on a large tree).
const Wait = 2 * time.Minute

// maxList bounds the prompts /rewind lists.
const maxList = 20

// State is the screen's undo history, opened at the first turn (it asks
// git whether the folder is a repository).
type State struct {
	once sync.Once
	h    *undo.History
	cwd  string
	sb   sandbox.Policy
}

// New is the history of the workspace cwd, not opened yet; its snapshots'
// git runs within sb, the session's sandbox policy.
func New(cwd string, sb sandbox.Policy) *State { return &State{cwd: cwd, sb: sb} }

// History opens the history on first use.
func (u *State) History() *undo.History {
	u.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), Wait)
		defer cancel()
		u.h = undo.Open(ctx, u.cwd, u.sb)
	})
	return u.h
}

// Begin returns what starts prompt's entry in the history (the next turn
// of log), called on the turn's goroutine before the turn runs: the git snapshot is taken while the model writes its first
// answer (the calls that could change a file wait for it), and the
// function it returns waits for it, before the turn's goroutine ends. A
// snapshot that fails leaves the before-images, and is logged.
func (u *State) Begin(log *session.Log, prompt string, logf func(string, ...any)) func(context.Context) func() {
	hd := log.Header()
	return func(ctx context.Context) func() {
		ctx, cancel := context.WithTimeout(ctx, Wait)
		h := u.History()
		h.Begin(ctx, hd.ID, prompt, log.Path(), log.NextTurn())
		return func() {
			defer cancel()
			if err := h.Wait(); err != nil {
				logf("undo: the working-tree snapshot before the turn failed: %v", err)
			}
		}
	}
}

// Restored says what a restore did.
func Restored(rep undo.Report, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "files as they were before “%s”: ", termsafe.EscapeLine(termtext.Cut(termtext.OneLine(rep.Turn.Prompt), 60)))
	switch len(rep.Restored) {
	case 0:
		b.WriteString("nothing had changed")
	case 1:
		b.WriteString("restored " + termsafe.EscapeLine(rep.Restored[0]))
	default:
		fmt.Fprintf(&b, "restored %d files", len(rep.Restored))
	}
	if n := len(rep.NotRestored); n > 0 {
		fmt.Fprintf(&b, "; %d not restorable (too large or not a regular file)", n)
	}
	if err != nil {
		b.WriteString("; stopped: " + termsafe.EscapeLine(err.Error()))
	}
	return b.String()
}

// List is what /rewind without a prompt's number says: the latest
// prompts, numbered from the first.
func List(turns []undo.Turn) string {
	var b strings.Builder
	b.WriteString("/rewind N goes back to before prompt N: its files restored, the conversation forked from there")
	for i := max(0, len(turns)-maxList); i < len(turns); i++ {
		fmt.Fprintf(&b, "\n  %2d  %s", i+1, termsafe.EscapeLine(termtext.Cut(termtext.OneLine(turns[i].Prompt), 70)))
	}
	return b.String()
}

// Before is a log's events before turn number turn started.
func Before(events []session.Event, turn int) []session.Event {
	for i, e := range events {
		var d session.TurnStart
		if e.Type == session.TypeTurnStart && e.Decode(&d) == nil && d.Turn >= turn {
			return events[:i]
		}
	}
	return events
}
