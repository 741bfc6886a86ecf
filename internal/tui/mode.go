package tui

import (
	"strings"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/callpreview"
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

// autoAnswer answers a question by the mode without asking: ok is the
// answer, decided whether there is one. A child's call is answered by
// the same mode as the session's own.
func (m *Model) autoAnswer(a *approval) (ok, decided bool) {
	switch {
	case m.ruleAllows(a):
		return true, true
	case m.mode == modeAutoEdit && callpreview.FileTool(a.name):
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
	m.notifyMode()
	m.notice = "mode: " + string(m.mode) + " (Shift-Tab cycles ask → auto-edit → read-only)"
}

// holdRules holds the session's allow rules back in read-only mode: the
// plan mode refuses everything beyond reading, whatever a rule allows.
func (m *Model) holdRules() {
	if set := m.sessionRules(); set != nil {
		set.HoldAllow(m.mode == modeReadOnly)
	}
}

// notifyMode has the model told the session's modes before its next step
// (agent.Notify): at the session's start and at every change of the
// question mode, so a refusal reads as the mode's, not a person's, and
// the plan mode is known before anything is refused.
func (m *Model) notifyMode() {
	if m.sess == nil || m.sess.Agent == nil || m.sess.Agent.Env == nil {
		return
	}
	m.sess.Agent.Notify(session.NoticeMode, m.modeNotice())
}

// modeNotice is the text of the mode notice: the permission mode, the
// question mode and the network of shell commands.
func (m *Model) modeNotice() string {
	env := m.sess.Agent.Env
	var b strings.Builder
	b.WriteString("[reins notice: the session's modes] Permission mode: " + string(env.Permission) + " (the ceiling, set with --permission when reins starts). ")
	switch {
	case !m.opts.Ask:
		b.WriteString("Questions: none (--yes): calls run as the permission mode allows. ")
	case m.mode == modeAutoEdit:
		b.WriteString("Question mode: auto-edit: write, edit, multi_edit and apply_patch run without a question; bash and other changes wait for the user's answer. ")
	case m.mode == modeReadOnly:
		b.WriteString("Question mode: read-only (a plan mode): every call beyond reading is refused without asking anyone; read, plan and propose, and say what you would change. The user switches modes with Shift-Tab. ")
	default:
		b.WriteString("Question mode: ask: write, edit and bash wait for the user's answer, who may refuse. ")
	}
	pol := env.Policy()
	switch {
	case !pol.Confined():
		b.WriteString("Shell commands run unconfined, with the host's network.")
	case !pol.DenyNetwork:
		b.WriteString("Shell commands run in the sandbox with the network on.")
	case len(pol.AllowDomains) > 0:
		b.WriteString("Shell commands run in the sandbox with the network off except through a proxy for the hosts in sandbox.allowDomains (" + strings.Join(pol.AllowDomains, ", ") + ")")
		if pol.AskSocket != "" {
			b.WriteString("; the user is asked about other hosts")
		}
		b.WriteString(".")
	default:
		b.WriteString("Shell commands run in the sandbox with the network off (the user can start reins with --network on or list hosts in sandbox.allowDomains).")
	}
	var allowed, refused []string
	for _, h := range m.hosts {
		if h.ok {
			allowed = append(allowed, h.host)
		} else {
			refused = append(refused, h.host)
		}
	}
	if len(allowed) > 0 {
		b.WriteString(" The user allowed for this session: " + strings.Join(allowed, ", ") + ".")
	}
	if len(refused) > 0 {
		b.WriteString(" The user refused for this session: " + strings.Join(refused, ", ") + ".")
	}
	return b.String()
}

// hostAnswer is an answered domain question.
type hostAnswer struct {
	host string
	ok   bool
}

// maxHosts bounds the answered hosts the mode notice names.
const maxHosts = 20

// noteHost records the answer to a domain question and has the model
// told the network state it made.
func (m *Model) noteHost(host string, ok bool) {
	if len(m.hosts) >= maxHosts {
		m.hosts = m.hosts[1:]
	}
	m.hosts = append(m.hosts, hostAnswer{termtext.Cut(termtext.OneLine(host), 253), ok})
	m.notifyMode()
}
