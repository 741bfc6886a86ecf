package tui

import (
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/termtext"
)

// askMode is how the screen answers the questions of write, edit and bash
// (Shift-Tab cycles it): ask every time, let edits through and ask for
// the rest, or refuse everything that is more than read-only (a plan
// mode: the model reads and proposes, nothing changes). --permission
// stays the ceiling, and --yes (no questions) leaves nothing to cycle.
type askMode string

const (
	modeAsk      askMode = "ask"
	modeAutoEdit askMode = "auto-edit"
	modeReadOnly askMode = "read-only"
)

func (a askMode) next() askMode {
	switch a {
	case modeAsk:
		return modeAutoEdit
	case modeAutoEdit:
		return modeReadOnly
	}
	return modeAsk
}

// modeHow is what changes the mode, as the model is told with a refusal
// the mode made (tool.Answer.How).
const modeHow = "Shift-Tab in the terminal"

// isEdit reports whether tool name edits files (auto-edit lets it run).
func isEdit(name string) bool {
	switch name {
	case "write", "edit", "multi_edit", "apply_patch":
		return true
	}
	return false
}

// autoAnswer answers a question by the mode without asking: ok is the
// answer, decided whether there is one. A child's call is answered by
// the same mode as the session's own.
func (m *Model) autoAnswer(a *approval) (ok, decided bool) {
	switch {
	case m.ruleAllows(a):
		return true, true
	case m.mode == modeAutoEdit && isEdit(a.name):
		m.say("  " + termsafe.EscapeLine(a.name) + " " + termsafe.EscapeLine(callSummary(a.name, string(a.args))) + ": allowed (auto-edit)" + childOf(a))
		return true, true
	case m.mode == modeReadOnly:
		a.mode = string(modeReadOnly)
		m.say("  " + termsafe.EscapeLine(a.name) + " " + termsafe.EscapeLine(callSummary(a.name, string(a.args))) + ": refused (read-only mode; Shift-Tab changes it)" + childOf(a))
		return false, true
	}
	return false, false
}

// childOf names the child whose call a is, for a line about it ("" for
// the session's own).
func childOf(a *approval) string {
	if a.child == "" {
		return ""
	}
	return " (child " + termsafe.EscapeLine(termtext.Cut(a.child, 60)) + ")"
}

// cycleMode is Shift-Tab.
func (m *Model) cycleMode() {
	if !m.opts.Ask {
		m.notice = "--yes: nothing asks, so there is no mode to change"
		return
	}
	m.mode = m.mode.next()
	m.holdRules()
	m.notice = "mode: " + string(m.mode) + " (Shift-Tab cycles ask → auto-edit → read-only)"
}

// holdRules holds the session's allow rules back in read-only mode: the
// plan mode refuses everything beyond reading, whatever a rule allows.
func (m *Model) holdRules() {
	if set := m.sessionRules(); set != nil {
		set.HoldAllow(m.mode == modeReadOnly)
	}
}
