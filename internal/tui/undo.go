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
	"github.com/reinsdev/reins/internal/tui/termtext"
	"github.com/reinsdev/reins/internal/tui/turnundo"
	"github.com/reinsdev/reins/internal/undo"
)

// /undo and /rewind (issue 30 item 7, issue 48): every prompt's turn
// starts and ends with a snapshot of the git working tree (in a git
// repository) and the session keeps the before-image of every file write,
// edit, multi_edit and apply_patch change (undo.History). Both work on the
// running session's turns only, and put a file back only where nothing
// but reins's turns changed it since (undo.Plan): a file the user made or
// edited is listed and left. /undo puts the files back as the last turn
// found them; /rewind N lists what it will restore and leave, asks (the
// default keeps everything), then puts them back as they were before
// prompt N and continues the conversation from there as a fork of the
// session (harness.Fork), prompt N back in the editor.

// undoState is the screen's undo history (internal/tui/turnundo).
type undoState = turnundo.State

// rewindAsk is the pending /rewind question: armed as approvals are, so
// no key typed before it showed can answer it.
type rewindAsk struct {
	plan  undo.Plan
	n     int
	armed bool
}

type rewindArmMsg struct{ q *rewindAsk }

// recordChanges makes s report the files its tools are about to change,
// and makes every call that can change one wait for the turn's snapshot.
func (m *Model) recordChanges(s *harness.Session) {
	if m.undo == nil {
		m.undo = turnundo.New(m.h.Cwd, m.h.Sandbox, m.h.Logf)
	}
	u := m.undo
	s.RecordChanges(func(ctx context.Context, paths []string) { u.History().Before(ctx, paths) })
}

// beginUndo returns what starts prompt's entry in the history, called
// on the turn's goroutine before the turn runs (turnundo.State.Begin).
func (m *Model) beginUndo(s *harness.Session, prompt string) func(context.Context) func() {
	return m.undo.Begin(s.Log, prompt)
}

func (m *Model) cmdUndo(string) tea.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), turnundo.Wait)
	defer cancel()
	rep, err := m.undo.History().Undo(ctx, m.root)
	if errors.Is(err, undo.ErrEmpty) {
		m.say("/undo: no turn of this session to undo")
		return nil
	}
	m.say("/undo: " + turnundo.Restored(rep, err) + " (the conversation keeps the turn; /rewind takes it back too)")
	return nil
}

func (m *Model) cmdRewind(arg string) tea.Cmd {
	hist := m.undo.History()
	turns := hist.Turns(m.root)
	if len(turns) == 0 {
		m.say("/rewind: no earlier prompt of this session to go back to")
		return nil
	}
	n, err := strconv.Atoi(arg)
	if arg == "" || err != nil || n < 1 || n > len(turns) {
		m.say(turnundo.List(turns))
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), turnundo.Wait)
	defer cancel()
	p, err := hist.Plan(ctx, m.root, n-1)
	if err != nil {
		m.say("/rewind: " + termsafe.EscapeLine(err.Error()))
		return nil
	}
	m.say(turnundo.PlanText(p, n))
	q := &rewindAsk{plan: p, n: n}
	m.rewindQ = q
	flush := m.opts.FlushInput
	return func() tea.Msg {
		if flush != nil {
			flush() // what was typed before the question showed is no answer
		}
		return rewindArmMsg{q}
	}
}

// rewindKey answers the /rewind question: y goes back, anything else
// keeps everything as it is.
func (m *Model) rewindKey(s string) tea.Cmd {
	if s == "ctrl+d" {
		return m.quit()
	}
	q := m.rewindQ
	if !q.armed {
		return nil
	}
	m.rewindQ = nil
	if s != "y" && s != "Y" {
		m.say("/rewind: kept everything; no file restored, the conversation goes on as it was")
		return nil
	}
	return m.rewind(q)
}

// rewindView is the question as the live screen shows it.
func (m *Model) rewindView() []string {
	if !m.rewindQ.armed {
		return []string{m.st.dim.Render("  …")}
	}
	return []string{termtext.Fit(m.st.warn.Render(turnundo.Question(m.rewindQ.plan, m.rewindQ.n)), m.width)}
}

// rewind goes back to before q's prompt: the session forked from there,
// the files it agreed to restore put back.
func (m *Model) rewind(q *rewindAsk) tea.Cmd {
	t := q.plan.Turn
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
	hist := m.undo.History()
	rep, rerr := hist.Rewind(ctx, q.plan)
	old := m.root
	if err := m.sess.Close(); err != nil {
		m.say("closing the previous session: " + termsafe.EscapeLine(err.Error()))
	}
	m.setSession(s)
	hist.Adopt(old, m.root) // the turns before prompt N are the fork's too
	m.commit(m.banner())
	m.say(fmt.Sprintf("/rewind: %s; the conversation goes on from before prompt %d as session %s, a fork of %s", turnundo.Restored(rep, rerr), q.n, m.root, old))
	m.editor.SetValue(t.Prompt)
	return nil
}
