package tui

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/turnundo"
	"github.com/reinsdev/reins/internal/undo"
)

// /undo and /rewind (issue 30 item 7): every prompt's turn starts with a
// snapshot of the git working tree (in a git repository) and the session
// keeps the before-image of every file write, edit, multi_edit and
// apply_patch change (undo.History). /undo puts the files back as the
// last turn found them; /rewind N puts them back as they were before
// prompt N and continues the conversation from there as a fork of the
// session (harness.Fork), prompt N back in the editor.

// undoState is the screen's undo history (internal/tui/turnundo).
type undoState = turnundo.State

// recordChanges makes s report the files its tools are about to change,
// and makes every call that can change one wait for the turn's snapshot.
func (m *Model) recordChanges(s *harness.Session) {
	if m.undo == nil {
		m.undo = turnundo.New(m.h.Cwd, m.h.Sandbox)
	}
	u := m.undo
	s.RecordChanges(func(ctx context.Context, paths []string) { u.History().Before(ctx, paths) })
}

// beginUndo returns what starts prompt's entry in the history, called
// on the turn's goroutine before the turn runs (turnundo.State.Begin).
func (m *Model) beginUndo(s *harness.Session, prompt string) func(context.Context) func() {
	return m.undo.Begin(s.Log, prompt, m.h.Logf)
}

func (m *Model) cmdUndo(string) tea.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), turnundo.Wait)
	defer cancel()
	rep, err := m.undo.History().Undo(ctx)
	if errors.Is(err, undo.ErrEmpty) {
		m.say("/undo: no turn of this screen to undo")
		return nil
	}
	m.say("/undo: " + turnundo.Restored(rep, err) + " (the conversation keeps the turn; /rewind takes it back too)")
	return nil
}

func (m *Model) cmdRewind(arg string) tea.Cmd {
	hist := m.undo.History()
	turns := hist.Turns()
	if len(turns) == 0 {
		m.say("/rewind: no earlier prompt of this screen to go back to")
		return nil
	}
	n, err := strconv.Atoi(arg)
	if arg == "" || err != nil || n < 1 || n > len(turns) {
		m.say(turnundo.List(turns))
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
	events := turnundo.Before(ld.Events, t.Number)
	o := m.opts.Session
	o.ForkOf = ld.Header.ID
	s, err := m.h.Fork(o, events)
	if err != nil {
		m.say("/rewind: could not fork the session: " + termsafe.EscapeLine(err.Error()))
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), turnundo.Wait)
	defer cancel()
	rep, rerr := hist.Rewind(ctx, n-1)
	old := m.root
	if err := m.sess.Close(); err != nil {
		m.say("closing the previous session: " + termsafe.EscapeLine(err.Error()))
	}
	m.setSession(s)
	m.commit(m.banner())
	m.say(fmt.Sprintf("/rewind: %s; the conversation goes on from before prompt %d as session %s, a fork of %s", turnundo.Restored(rep, rerr), n, m.root, old))
	m.editor.SetValue(t.Prompt)
	return nil
}
