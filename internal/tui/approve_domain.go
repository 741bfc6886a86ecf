package tui

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/termsafe"
)

// The domain question (issue 26 item 3): a process the session started
// (bash, a background command) asks the sandbox's domain proxy for a host
// outside sandbox.allowDomains; the proxy asks here, "allow HOST for this
// session?", while the connection waits. [y] (or Enter) allows the host for
// the rest of the session — held in reins's memory (netproxy.Questions),
// never written to the config — and [n] or Esc refuses it for the session;
// the process then gets the proxy's refusal line. The question is an
// approval like a tool's, so the same rule answers it: only keys typed
// after it was drawn (approve.go). Modes and permission rules do not
// decide it: they are about tools, this is about the network.
//
// The question is the proxy's, not the turn's: a turn that ends leaves it
// open (a background command may be waiting), and it goes away by itself
// when its connection stops waiting (AskTimeout, the process ended, the
// session closed) — withdrawMsg.

// domainAskName is the name a domain question carries where a tool's name
// would be (the window title, the answer line).
const domainAskName = "network"

// withdrawMsg says that nobody waits for the domain question a any more.
type withdrawMsg struct{ a *approval }

// isDomain reports whether a is a domain question.
func isDomain(a *approval) bool { return a.preview != nil && a.preview.host != "" }

// askDomain asks the user whether host may be reached for the rest of the
// session; false when refused, or when ctx ends or the screen closes
// first. It runs on the proxy's question goroutine (harness
// SessionOptions.AskDomain).
func (f *feed) askDomain(ctx context.Context, host string) bool {
	return f.askSandbox(ctx, domainAskName, &preview{host: host, gone: ctx.Done()})
}

// awaitWithdraw reports, once the question's connection stops waiting,
// that a may leave the screen (a no-op when it was answered first).
func awaitWithdraw(a *approval) tea.Cmd {
	gone := a.preview.gone
	return func() tea.Msg {
		<-gone
		return withdrawMsg{a}
	}
}

// withdraw takes a off the screen if it is still up, saying so.
func (m *Model) withdraw(a *approval) tea.Cmd {
	for i, b := range m.approvals {
		if b != a {
			continue
		}
		m.approvals = append(m.approvals[:i:i], m.approvals[i+1:]...)
		m.commit(m.st.dim.Render("  " + domainAskName + " " + termsafe.EscapeLine(a.preview.host) + ": not answered; the connection stopped waiting"))
		if i == 0 {
			return m.front()
		}
		return nil
	}
	return nil
}

// domainQuestion is the domain question's text, wrapped to width.
func (m *Model) domainQuestion(a *approval, width int) []string {
	host := termsafe.EscapeLine(a.preview.host)
	return m.sandboxQuestion("? allow "+host+" for this session?",
		"a process of this session wants to reach "+host+" through the sandbox's proxy; it is not in sandbox.allowDomains", width)
}

// domainHint is the domain question's last line.
const domainHint = "  [y] allow for this session  [n] refuse  [Esc] refuse"

// domainKey answers the head domain question with key s.
func (m *Model) domainKey(s string) tea.Cmd {
	switch s {
	case "y", "enter":
		m.answer(true, false)
	case "n", "esc":
		m.answer(false, false)
	default:
		return nil
	}
	return m.front()
}

// domainVerdict is the line an answered domain question leaves.
func (m *Model) domainVerdict(a *approval, ok bool) string {
	v := "refused for this session"
	if ok {
		v = "allowed for this session"
	}
	return m.st.dim.Render("  " + domainAskName + " " + termsafe.EscapeLine(a.preview.host) + ": " + v)
}
