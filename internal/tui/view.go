package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/childtree"
	"github.com/reinsdev/reins/internal/tui/sessionlist"
	"github.com/reinsdev/reins/internal/tui/termtext"
	"github.com/reinsdev/reins/internal/tui/todopin"
)

// View draws the live part of the screen: what the running step streams,
// calls in flight, the tree of children, an approval question, the editor
// and the status line. Finished work is in the scrollback.
func (m *Model) View() tea.View {
	var b []string
	w := m.width
	switch {
	case m.live.reasoning > 0 && m.unfold:
		b = append(b, m.st.dim.Render("▾ reasoning…\n"+termtext.Tail(termtext.Wrap(termtext.LastBytes(m.live.thinking.String(), 4096), max(w-2, 10)), 6)))
	case m.live.reasoning > 0:
		b = append(b, m.st.dim.Render(fmt.Sprintf("▸ reasoning… (%s, folded; Ctrl-O unfolds)", termtext.Bytes(m.live.reasoning))))
	}
	if t := m.live.text.String(); t != "" {
		room := max(minLiveLines, m.height-12-min(m.tree.Len(), m.height/2)-min(len(m.live.calls), m.height/2))
		b = append(b, termtext.Tail(m.liveAnswer(t, room), room))
	}
	// Calls and children share what the screen has left; the rest is
	// counted (the scrollback gets every one when it settles).
	room := max(4, m.height-8)
	for i, c := range m.live.calls {
		if i == room/2 {
			b = append(b, m.st.dim.Render(fmt.Sprintf("… and %d more calls", len(m.live.calls)-i)))
			break
		}
		line := "⋯ " + termsafe.EscapeLine(c.name)
		if sum := callSummary(c.name, c.args); sum != "" {
			line += " " + termsafe.EscapeLine(sum)
		}
		b = append(b, termtext.Fit(m.st.running.Render(line), w))
	}
	if !m.tree.Empty() {
		lines := m.tree.Render(m.root, m.now(), w, m.st.tree())
		if n := room / 2; len(lines) > n {
			lines = append(lines[:n-1], m.st.dim.Render(fmt.Sprintf("… and %d more lines of children", len(lines)-n+1)))
		}
		b = append(b, m.st.bold.Render("children"))
		b = append(b, lines...)
	}
	if m.trustQ != nil && len(m.approvals) == 0 {
		b = append(b, m.trustView()...)
	}
	if len(m.approvals) > 0 {
		b = append(b, m.questionView()...)
	} else if m.rewindQ != nil {
		b = append(b, m.rewindView()...)
	}
	b = append(b, m.todo.View(m.root, w, todopin.Styles{Bold: m.st.bold.Style, Dim: m.st.dim.Style, Running: m.st.running.Style})...)
	b = append(b, m.queuedView()...)
	if m.notice != "" {
		b = append(b, termtext.Fit(m.st.dim.Render(m.notice), w))
	}
	if m.picker != nil {
		b = append(b, m.pickerView()...)
	} else {
		b = append(b, m.atView()...)
		b = append(b, m.editor.View())
	}
	b = append(b, m.status())
	v := tea.NewView(strings.Join(b, "\n"))
	// The window title says what the session waits for, so a terminal
	// tab shows a question even when another window has the focus.
	v.WindowTitle = "reins"
	switch {
	case len(m.approvals) > 0:
		v.WindowTitle = "reins · approve " + termsafe.EscapeLine(termtext.Cut(m.approvals[0].name, 40)) + "?"
	case m.running:
		v.WindowTitle = "reins · running"
	}
	return v
}

// liveAnswer is the streaming answer as shown (markdown.Live).
func (m *Model) liveAnswer(t string, room int) string {
	return m.liveMD.Render(m.md, t, room, m.width)
}

// status is the bottom line: model, session, usage and cost, state.
func (m *Model) status() string {
	u := m.usage.Add(m.turnUsage)
	parts := []string{termsafe.EscapeLine(m.modelName()), sessionlist.ShortID(m.root), childtree.Usage(u)}
	if sm := m.opts.Session.Model; sm != nil && sm.Effort != "" {
		parts[0] += " · effort " + string(sm.Effort) // --effort, config or agent
	}
	if t := m.trustStatus(); t != "" {
		parts = append(parts, t)
	}
	if m.mode != modeAsk {
		parts = append(parts, string(m.mode))
	}
	switch {
	case len(m.approvals) > 0:
		parts = append(parts, "waiting for approval")
	case m.running:
		parts = append(parts, "running "+childtree.Elapsed(m.now().Sub(m.turnStart))+" · Esc cancels")
	}
	if m.shell != nil {
		sh := "! running " + childtree.Elapsed(m.now().Sub(m.shell.Started))
		if !m.running {
			sh += " · Esc stops it" // while a turn runs, Esc cancels the turn
		}
		parts = append(parts, sh)
	}
	if n := len(m.queue); n > 0 {
		parts = append(parts, fmt.Sprintf("%d queued", n))
	}
	return termtext.Fit(m.st.dim.Render(strings.Join(parts, " · ")), m.width)
}

// maxQueuedShown bounds the queued prompts drawn above the editor.
const maxQueuedShown = 3

// queuedView shows the prompts waiting for the running turn, each on one
// line, so the user sees what will be sent (issue 48).
func (m *Model) queuedView() []string {
	var out []string
	for i, q := range m.queue {
		if i == maxQueuedShown {
			out = append(out, m.st.dim.Render(fmt.Sprintf("  … and %d more queued", len(m.queue)-i)))
			break
		}
		out = append(out, termtext.Fit(m.st.dim.Render("⧗ "+termsafe.EscapeLine(termtext.OneLine(q))), m.width))
	}
	return out
}
