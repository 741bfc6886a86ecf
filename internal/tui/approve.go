package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/callpreview"
	"github.com/reinsdev/reins/internal/tui/linediff"
	"github.com/reinsdev/reins/internal/tui/termtext"
)

// An approval question shows everything the call will do before it is
// answered (issue 26 item 6): every argument whole (wrapped, never cut,
// control characters written as escapes), and for write and edit the
// diff against the file as it is now, removed lines included. A question
// too tall for the screen is printed whole to the scrollback and the
// live screen says so.
//
// Only keys the user typed after the question was drawn answer it: when
// a question comes to the front the terminal's pending input is flushed
// (Options.FlushInput) and the question is armed by a message queued
// behind every key already read, so keys typed (or planted with TIOCSTI)
// before it appeared are dropped, never taken as an answer. The answer
// keys are shown only once the question is armed.

// diffContext is the unchanged lines shown around each change.
const diffContext = callpreview.Context

// preview is what a question shows of a call (callpreview.Preview),
// computed when the call asks (off the screen's goroutine), so the diff
// is against the file at that moment; or, for a domain question
// (approve_domain.go), its host.
type preview struct {
	callpreview.Preview
	// host: a domain question's host (approve_domain.go); gone closes
	// when its connection stops waiting.
	host string
	gone <-chan struct{}
	// git: a .git question (approve_git.go) about command.
	git     bool
	command string
}

// armMsg arms the question a: keys after it answer it.
type armMsg struct{ a *approval }

// makePreview computes the preview of a call of tool name with args, in
// the workspace cwd.
func makePreview(cwd, name string, args json.RawMessage) *preview {
	return &preview{Preview: *callpreview.Of(cwd, name, args)}
}

// question is the whole question for a, wrapped to width: every line,
// never cut.
func (m *Model) question(a *approval, width int) []string {
	if isDomain(a) {
		return m.domainQuestion(a, width)
	}
	if isGit(a) {
		return m.gitQuestion(a, width)
	}
	w := max(width, 20)
	head := "? allow " + termsafe.EscapeLine(a.name)
	if a.preview == nil { // asked other than through the feed
		a.preview = makePreview(m.h.Cwd, a.name, a.args)
	}
	p := a.preview
	if p.Path != "" {
		head += " " + termsafe.EscapeLine(p.Path)
	}
	head += childOf(a)
	if p.Note != "" {
		head += " (" + p.Note + ")"
	}
	out := hang(m.st.warn.Render(head), "", "  ", w)
	for _, f := range p.Fields {
		lines := strings.Split(f.Value, "\n")
		if len(lines) == 1 {
			out = append(out, hang(termsafe.EscapeLine(f.Key)+": "+termsafe.EscapeLine(f.Value), "  ", "    ", w)...)
			continue
		}
		out = append(out, "  "+termsafe.EscapeLine(f.Key)+":")
		for _, l := range lines {
			out = append(out, hang(termsafe.EscapeLine(l), "  │ ", "  │ ", w)...)
		}
	}
	for _, d := range p.Diff {
		switch d.Kind {
		case linediff.Gap:
			out = append(out, m.st.dim.Render(fmt.Sprintf("    ⋯ %d unchanged lines", d.N)))
		case callpreview.FileHead:
			out = append(out, hangStyled("  ", termsafe.EscapeLine(d.Text), w, m.st.warn.Render)...)
		case linediff.Del:
			out = append(out, hangStyled("    - ", termsafe.EscapeLine(d.Text), w, m.st.bad.Render)...)
		case linediff.Add:
			out = append(out, hangStyled("    + ", termsafe.EscapeLine(d.Text), w, m.st.ok.Render)...)
		default:
			out = append(out, hangStyled("      ", termsafe.EscapeLine(d.Text), w, m.st.dim.Render)...)
		}
	}
	return out
}

// hang wraps s to width with first before its first line and rest
// before the others.
func hang(s, first, rest string, width int) []string {
	lines := strings.Split(termtext.Wrap(s, max(width-len(rest), 10)), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = rest + lines[i]
		}
	}
	return lines
}

func hangStyled(prefix, s string, width int, st func(...string) string) []string {
	lines := hang(s, prefix, strings.Repeat(" ", len(prefix)), width)
	for i := range lines {
		lines[i] = st(lines[i])
	}
	return lines
}

// questionRoom is how many lines of a question fit on the live screen.
func (m *Model) questionRoom() int { return max(6, m.height-8) }

// questionView is the live screen's part of the head question.
func (m *Model) questionView() []string {
	a := m.approvals[0]
	q := m.question(a, m.width)
	if room := m.questionRoom(); len(q) > room {
		q = append(q[:room-1], m.st.dim.Render(fmt.Sprintf("  … %d more lines: the whole question is printed above", len(q)-room+1)))
	}
	if !a.armed {
		return append(q, m.st.dim.Render("  …"))
	}
	if isDomain(a) {
		return append(q, termtext.Fit(domainHint, m.width))
	}
	if isGit(a) {
		return append(q, termtext.Fit(gitHint, m.width))
	}
	return append(q, termtext.Fit(m.answerHint(a), m.width))
}

// front makes the head question current: it flushes the input the
// terminal holds and arms the question behind the keys already read.
// Nothing to do when the head is armed already or arming.
func (m *Model) front() tea.Cmd {
	if len(m.approvals) == 0 {
		return nil
	}
	a := m.approvals[0]
	if a.armed || a.arming {
		return nil
	}
	a.arming = true
	if q := m.question(a, m.width); len(q) > m.questionRoom() {
		m.commit(strings.Join(q, "\n"))
	}
	flush := m.opts.FlushInput
	return func() tea.Msg {
		if flush != nil {
			flush()
		}
		return armMsg{a}
	}
}

// arm arms a when it is still the head question.
func (m *Model) arm(a *approval) {
	if len(m.approvals) > 0 && m.approvals[0] == a {
		a.armed = true
	}
}

// askSandbox puts a question of the sandbox's (the .git question, the
// domain question: name stands where a tool's name would) on the screen
// and waits for its answer: false when refused, or when ctx ends or the
// screen closes first. One place for both, so they queue, wait and give
// up alike.
func (f *feed) askSandbox(ctx context.Context, name string, p *preview) bool {
	a := &approval{name: name, args: json.RawMessage(`{}`), reply: make(chan bool, 1), preview: p}
	if !f.Push(item{approve: a}) {
		return false
	}
	select {
	case ok := <-a.reply:
		return ok
	case <-ctx.Done():
		return false
	case <-f.Done():
		return false
	}
}

// sandboxQuestion is a sandbox question's text wrapped to width: the
// question (head) in the warning style, then why it is asked.
func (m *Model) sandboxQuestion(head, why string, width int) []string {
	w := max(width, 20)
	out := hang(m.st.warn.Render(head), "", "  ", w)
	return append(out, hang(why, "  ", "  ", w)...)
}
