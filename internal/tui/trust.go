package tui

import (
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/trust"
	"github.com/reinsdev/reins/internal/tui/termtext"
)

// TrustQuestion is what the screen needs to ask, in an untrusted folder
// whose instruction, agent or MCP files were ignored, whether to trust it
// (issue 30 item 1): at start, before the first prompt is sent, and again
// on /trust.
type TrustQuestion struct {
	// AskNow asks at start; false when the user said never to ask here.
	AskNow bool
	// Trust records the folder as trusted and opens a harness that reads
	// its files, with the session template to use on it; the screen
	// switches to them at once. The caller closes every harness it opened.
	Trust func(context.Context) (*harness.Harness, harness.SessionOptions, error)
	// Never records that this folder is not to be asked about again.
	Never func() error
}

// trustAsk is the pending folder question; armed as approvals are, so no
// key typed before it showed (or planted) can answer it. deferred: asked
// at launch while the terminal still held keys the user typed as reins
// started; it waits for that prompt's Enter instead of flushing it.
type trustAsk struct{ arming, armed, deferred bool }

type trustArmMsg struct{ q *trustAsk }

type trustDeferMsg struct{ q *trustAsk }

// untrusted reports whether the folder's own files are being ignored.
func (m *Model) untrusted() bool { return !m.h.Trusted && len(m.h.Ignored) > 0 }

// askTrust puts the folder question up.
func (m *Model) askTrust() tea.Cmd {
	q := &trustAsk{arming: true}
	m.trustQ = q
	return m.armTrust(q)
}

// askTrustAtLaunch puts the folder question up as the screen starts.
// Keys the user typed while reins was starting are still unread in the
// terminal then, and flushing them would lose that prompt (issue 30: input
// is never lost); at that moment nothing of this session has run, so they
// are the user's. Then the question waits (deferred) and those keys go to
// the editor; the prompt's Enter queues it and brings the question to the
// front, armed as always (armTrust).
func (m *Model) askTrustAtLaunch() tea.Cmd {
	q := &trustAsk{arming: true}
	m.trustQ = q
	pending, flush := m.opts.PendingInput, m.opts.FlushInput
	return func() tea.Msg {
		if pending != nil && pending() {
			return trustDeferMsg{q}
		}
		if flush != nil {
			flush()
		}
		return trustArmMsg{q}
	}
}

// armTrust flushes the terminal's unread input and then arms q, so only
// keys typed after it showed can answer it.
func (m *Model) armTrust(q *trustAsk) tea.Cmd {
	q.deferred = false
	flush := m.opts.FlushInput
	return func() tea.Msg {
		if flush != nil {
			flush()
		}
		return trustArmMsg{q}
	}
}

// trustView is the question as the live screen shows it.
func (m *Model) trustView() []string {
	w := m.width
	out := hang(m.st.warn.Render("? trust "+trust.Quote(m.h.Cwd)+"? Its own files are ignored until you do:"), "", "  ", w)
	for i, f := range m.h.Ignored {
		if i == 8 {
			out = append(out, fmt.Sprintf("    … and %d more", len(m.h.Ignored)-i))
			break
		}
		out = append(out, hang(trust.Quote(f), "    ", "      ", w)...)
	}
	out = append(out, hang(m.st.dim.Render("They can start programs (MCP servers, hooks) and choose where your API keys are sent."), "  ", "  ", w)...)
	if m.trustQ.deferred {
		return append(out, m.st.dim.Render("  finish the prompt you typed and press Enter: the question comes next, the prompt is sent once it is answered"))
	}
	if !m.trustQ.armed {
		return append(out, m.st.dim.Render("  …"))
	}
	return append(out, termtext.Fit("  [y] trust this folder  [n] not this time  [x] never ask here", w))
}

// trustKey answers the folder question with key s.
func (m *Model) trustKey(s string) tea.Cmd {
	if !m.trustQ.armed {
		return nil
	}
	switch s {
	case "y":
		m.trustQ = nil
		h, o, err := m.opts.Trust.Trust(context.Background())
		if err != nil {
			m.say("/trust: " + termsafe.EscapeLine(err.Error()))
			return m.afterTrust()
		}
		m.useHarness(h, o)
		m.say("trusted " + trust.Quote(m.h.Cwd) + ": its instructions, agents and MCP servers are in use")
	case "n", "esc":
		m.trustQ = nil
		m.say("not trusted this time: the folder's own files stay ignored (/trust asks again)")
	case "x":
		m.trustQ = nil
		if err := m.opts.Trust.Never(); err != nil {
			m.say("could not record it: " + termsafe.EscapeLine(err.Error()))
		} else {
			m.say("reins will not ask about this folder again (reins trust " + trust.ShellArg(m.h.Cwd) + " trusts it; /trust asks)")
		}
	default:
		return nil
	}
	return m.afterTrust()
}

// afterTrust sends the prompts typed while the question was up.
func (m *Model) afterTrust() tea.Cmd {
	if m.running || len(m.queue) == 0 {
		return nil
	}
	next := m.queue[0]
	m.queue = m.queue[1:]
	return m.startTurn(next)
}

// useHarness switches the screen to h and the running session reopened
// on it — even when nothing was sent yet: a new one left the first, empty
// session behind (issue 48).
func (m *Model) useHarness(h *harness.Harness, o harness.SessionOptions) {
	if err := m.sess.Close(); err != nil {
		m.say("closing the previous session: " + termsafe.EscapeLine(err.Error()))
	}
	m.h = h
	m.attach()
	o.Approve = m.opts.Session.Approve
	o.Ask = m.opts.Session.Ask
	o.AskChild = m.opts.Session.AskChild
	o.AskGitWritable = m.opts.Session.AskGitWritable
	o.BeforeRun = m.opts.Session.BeforeRun
	m.opts.Session = o
	o.Resume = m.root
	s, err := m.h.NewSession(o)
	if err != nil {
		m.say("could not open the session: " + termsafe.EscapeLine(err.Error()))
		return
	}
	m.setSession(s)
	m.commit(m.banner())
}

func (m *Model) cmdTrust(string) tea.Cmd {
	switch {
	case m.opts.Trust == nil:
		m.say("/trust: not available here; run: reins trust " + trust.ShellArg(m.h.Cwd))
	case m.h.Trusted:
		m.say("this folder is trusted")
	case len(m.h.Ignored) == 0:
		m.say("this folder has no instruction, agent or MCP files to trust")
	default:
		return m.askTrust()
	}
	return nil
}

// trustStatus is the status bar's word on trust.
func (m *Model) trustStatus() string {
	if m.untrusted() {
		return "untrusted"
	}
	return ""
}
