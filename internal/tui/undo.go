package tui

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/undo"
)

// /undo and /rewind (issue 30 item 7): every prompt's turn starts with a
// snapshot of the git working tree (in a git repository) and the session
// keeps the before-image of every file write, edit, multi_edit and
// apply_patch change (undo.History). /undo puts the files back as the
// last turn found them; /rewind N puts them back as they were before
// prompt N and continues the conversation from there as a fork of the
// session (harness.Fork), prompt N back in the editor.

// undoWait bounds one snapshot or restore (git on a large tree).
const undoWait = 2 * time.Minute

// undoState is the screen's undo history, opened at the first turn (it
// asks git whether the folder is a repository).
type undoState struct {
	once sync.Once
	h    *undo.History
	cwd  string
}

func (u *undoState) history() *undo.History {
	u.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), undoWait)
		defer cancel()
		u.h = undo.Open(ctx, u.cwd)
	})
	return u.h
}

// recordChanges makes s report the files its tools are about to change,
// and makes every call that can change one wait for the turn's snapshot.
func (m *Model) recordChanges(s *harness.Session) {
	if m.undo == nil {
		m.undo = &undoState{cwd: m.h.Cwd}
	}
	u := m.undo
	s.RecordChanges(func(ctx context.Context, paths []string) { u.history().Before(ctx, paths) })
}

// beginUndo returns what starts prompt's entry in the history, called on
// the turn's goroutine before the turn runs: the git snapshot is taken
// while the model writes its first answer (the calls that could change a
// file wait for it), and the function it returns waits for it, before
// the turn's goroutine ends. A snapshot that fails leaves the
// before-images.
func (m *Model) beginUndo(s *harness.Session, prompt string) func(context.Context) func() {
	u, logf := m.undo, m.h.Logf
	hd := s.Log.Header()
	return func(ctx context.Context) func() {
		ctx, cancel := context.WithTimeout(ctx, undoWait)
		h := u.history()
		h.Begin(ctx, hd.ID, prompt, s.Log.Path(), s.Log.NextTurn())
		return func() {
			defer cancel()
			if err := h.Wait(); err != nil {
				logf("undo: the working-tree snapshot before the turn failed: %v", err)
			}
		}
	}
}

func (m *Model) cmdUndo(string) tea.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), undoWait)
	defer cancel()
	rep, err := m.undo.history().Undo(ctx)
	if errors.Is(err, undo.ErrEmpty) {
		m.say("/undo: no turn of this screen to undo")
		return nil
	}
	m.say("/undo: " + restoredText(rep, err) + " (the conversation keeps the turn; /rewind takes it back too)")
	return nil
}

// restoredText says what a restore did.
func restoredText(rep undo.Report, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "files as they were before “%s”: ", termsafe.EscapeLine(Cut(oneLine(rep.Turn.Prompt), 60)))
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

// maxRewindList bounds the prompts /rewind lists.
const maxRewindList = 20

func (m *Model) cmdRewind(arg string) tea.Cmd {
	hist := m.undo.history()
	turns := hist.Turns()
	if len(turns) == 0 {
		m.say("/rewind: no earlier prompt of this screen to go back to")
		return nil
	}
	n, err := strconv.Atoi(arg)
	if arg == "" || err != nil || n < 1 || n > len(turns) {
		var b strings.Builder
		b.WriteString("/rewind N goes back to before prompt N: its files restored, the conversation forked from there")
		from := max(0, len(turns)-maxRewindList)
		for i := from; i < len(turns); i++ {
			fmt.Fprintf(&b, "\n  %2d  %s", i+1, termsafe.EscapeLine(Cut(oneLine(turns[i].Prompt), 70)))
		}
		m.say(b.String())
		return nil
	}
	t := turns[n-1]
	// The conversation before the turn, from the log it was made in.
	if err := m.sess.Log.Flush(); err != nil {
		m.say("/rewind: " + termsafe.EscapeLine(err.Error()))
		return nil
	}
	ld, err := session.Load(t.Log)
	if err != nil {
		m.say("/rewind: " + termsafe.EscapeLine(err.Error()))
		return nil
	}
	events := ld.Events
	for i, e := range events {
		var d session.TurnStart
		if e.Type == session.TypeTurnStart && e.Decode(&d) == nil && d.Turn >= t.Number {
			events = events[:i]
			break
		}
	}
	o := m.opts.Session
	o.ForkOf = ld.Header.ID
	s, err := m.h.Fork(o, events)
	if err != nil {
		m.say("/rewind: could not fork the session: " + termsafe.EscapeLine(err.Error()))
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), undoWait)
	defer cancel()
	rep, rerr := hist.Rewind(ctx, n-1)
	old := m.root
	if err := m.sess.Close(); err != nil {
		m.say("closing the previous session: " + termsafe.EscapeLine(err.Error()))
	}
	m.setSession(s)
	m.commit(m.banner())
	m.say(fmt.Sprintf("/rewind: %s; the conversation goes on from before prompt %d as session %s, a fork of %s", restoredText(rep, rerr), n, m.root, old))
	m.editor.SetValue(t.Prompt)
	return nil
}
