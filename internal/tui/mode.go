package tui

import "github.com/reinsdev/reins/internal/termsafe"

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

// autoAnswer answers a question by the mode without asking: ok is the
// answer, decided whether there is one.
func (m *Model) autoAnswer(a *approval) (ok, decided bool) {
	switch {
	case m.ruleAllows(a):
		return true, true
	case m.mode == modeAutoEdit && (a.name == "write" || a.name == "edit"):
		m.say("  " + termsafe.EscapeLine(a.name) + " " + termsafe.EscapeLine(callSummary(a.name, string(a.args))) + ": allowed (auto-edit)")
		return true, true
	case m.mode == modeReadOnly:
		m.say("  " + termsafe.EscapeLine(a.name) + " " + termsafe.EscapeLine(callSummary(a.name, string(a.args))) + ": refused (read-only mode; Shift-Tab changes it)")
		return false, true
	}
	return false, false
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
