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
	logf func(string, ...any)
	sb   sandbox.Policy
}

// New is the history of the workspace cwd, not opened yet; its snapshots'
// git runs within sb, the session's sandbox policy; logf receives what goes
// wrong in the background (a failed snapshot or prune).
func New(cwd string, sb sandbox.Policy, logf func(string, ...any)) *State {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &State{cwd: cwd, sb: sb, logf: logf}
}

// History opens the history on first use.
func (u *State) History() *undo.History {
	u.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), Wait)
		defer cancel()
		u.h = undo.Open(ctx, u.cwd, u.sb)
		// The undo data is bounded: the refs of a session's turns before
		// its last 100, and those older than 30 days, go now.
		if _, err := u.h.Prune(ctx, time.Now()); err != nil {
			u.logf("undo: pruning the snapshots: %v", err)
		}
	})
	return u.h
}

// Begin returns what starts prompt's entry in the history (the next turn
// of log), called on the turn's goroutine before the turn runs: the git
// snapshot is taken while the model writes its first answer (the calls
// that could change a file wait for it), and the function it returns
// waits for it, then records what the turn left (undo.History.End),
// before the turn's goroutine ends — a cancelled turn too. A snapshot
// that fails leaves the before-images, and is logged.
func (u *State) Begin(log *session.Log, prompt string) func(context.Context) func() {
	hd := log.Header()
	return func(ctx context.Context) func() {
		ctx, cancel := context.WithTimeout(ctx, Wait)
		h := u.History()
		h.Begin(ctx, hd.ID, prompt, log.Path(), log.NextTurn())
		return func() {
			defer cancel()
			if err := h.Wait(); err != nil {
				u.logf("undo: the working-tree snapshot before the turn failed: %v", err)
			}
			ectx, ecancel := context.WithTimeout(context.WithoutCancel(ctx), Wait)
			defer ecancel()
			if err := h.End(ectx); err != nil {
				u.logf("undo: the working-tree snapshot after the turn failed: %v", err)
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
		b.WriteString("nothing restored")
	case 1:
		b.WriteString("restored " + termsafe.EscapeLine(rep.Restored[0]))
	default:
		fmt.Fprintf(&b, "restored %d files", len(rep.Restored))
	}
	if n := len(rep.Left); n > 0 {
		fmt.Fprintf(&b, "; left as they are, changed outside reins's turns: %s", names(rep.Left, 5))
	}
	if n := len(rep.NotRestored); n > 0 {
		fmt.Fprintf(&b, "; %d not restorable (too large or not a regular file)", n)
	}
	if err != nil {
		b.WriteString("; stopped: " + termsafe.EscapeLine(err.Error()))
	}
	return b.String()
}

// names are the first max of paths, escaped, and how many more.
func names(paths []string, max int) string {
	var out []string
	for i, p := range paths {
		if i == max {
			out = append(out, fmt.Sprintf("and %d more", len(paths)-i))
			break
		}
		out = append(out, termsafe.EscapeLine(p))
	}
	return strings.Join(out, ", ")
}

// maxPlan bounds the paths of each kind PlanText lists.
const maxPlan = 20

// PlanText is what /rewind N shows before it asks: the files it will
// restore, those it will leave (changed outside reins's turns: by the
// user, or another program) and what it does with the conversation.
func PlanText(p undo.Plan, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "/rewind %d goes back to before “%s”:", n, termsafe.EscapeLine(termtext.Cut(termtext.OneLine(p.Turn.Prompt), 60)))
	list := func(what string, paths []string, why string) {
		for i, path := range paths {
			if i == maxPlan {
				fmt.Fprintf(&b, "\n  %s … and %d more", what, len(paths)-i)
				return
			}
			fmt.Fprintf(&b, "\n  %s %s%s", what, termsafe.EscapeLine(path), why)
		}
	}
	if len(p.Restore) == 0 {
		b.WriteString("\n  no file to restore")
	}
	list("restore", p.Restore, "")
	list("leave  ", p.Leave, "  (changed outside reins's turns: by you or another program)")
	list("leave  ", p.NotRestorable, "  (not restorable: too large or not a regular file)")
	fmt.Fprintf(&b, "\nthen the conversation is forked from before prompt %d, prompt %d back in the editor", n, n)
	return b.String()
}

// Question is the line that asks whether to rewind; any answer but y
// keeps everything.
func Question(p undo.Plan, n int) string {
	return fmt.Sprintf("? fork from before prompt %d, restore %d file(s), leave %d? [y/N]", n, len(p.Restore), len(p.Leave)+len(p.NotRestorable))
}

// List is what /rewind without a prompt's number says: the latest
// prompts, numbered from the first.
func List(turns []undo.Turn) string {
	var b strings.Builder
	b.WriteString("/rewind N goes back to before prompt N of this session: its files restored where only reins changed them (it lists them and asks first), the conversation forked from there")
	for i := max(0, len(turns)-maxList); i < len(turns); i++ {
		fmt.Fprintf(&b, "\n  %2d  %s", i+1, termsafe.EscapeLine(termtext.Cut(termtext.OneLine(turns[i].Prompt), 70)))
	}
	return b.String()
}

// Before is a log's events before turn number turn started.
func Before(events []session.Event, turn int) []session.Event {
	for i, e := range events {
		if d, ok := e.Payload.(session.TurnStart); ok && d.Turn >= turn {
			return events[:i]
		}
	}
	return events
}
