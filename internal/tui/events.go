package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/attach"
	"github.com/reinsdev/reins/internal/tui/callpreview"
	"github.com/reinsdev/reins/internal/tui/linediff"
	"github.com/reinsdev/reins/internal/tui/termtext"
	"github.com/reinsdev/reins/internal/tui/toolsummary"
)

// items applies a batch of the feed.
func (m *Model) items(its []item) tea.Cmd {
	var cmds []tea.Cmd
	for _, it := range its {
		if it.done != nil {
			cmds = append(cmds, m.turnDone(it.done))
			continue
		}
		if it.ran != nil {
			if m.asked == nil || len(m.asked) >= maxAsked {
				m.asked = map[string][]linediff.Line{}
			}
			m.asked[it.ran.key] = it.ran.diff
			continue
		}
		if it.notice != "" {
			m.commit(m.st.warn.Render("  " + it.notice))
			continue
		}
		if it.approve != nil && isDomain(it.approve) {
			// Not a tool's: no mode or rule decides it (approve_domain.go).
			m.approvals = append(m.approvals, it.approve)
			cmds = append(cmds, m.front(), awaitWithdraw(it.approve))
			continue
		}
		if it.approve != nil && isGit(it.approve) {
			// No mode or rule decides it (approve_git.go).
			m.approvals = append(m.approvals, it.approve)
			cmds = append(cmds, m.front())
			continue
		}
		if it.approve != nil {
			if ok, decided := m.autoAnswer(it.approve); decided {
				it.approve.reply <- ok
				continue
			}
			m.approvals = append(m.approvals, it.approve)
			cmds = append(cmds, m.front())
			continue
		}
		m.event(it.header, it.event)
	}
	return tea.Batch(cmds...)
}

// event applies one session event: the tree takes every session's; the
// answer, tool calls and retries shown are the root session's.
func (m *Model) event(hd session.Header, e session.Event) {
	ours := hd.ID == m.root
	if !ours && !m.tree.Known(hd, m.root) {
		return // an earlier session's late event (/new), or not ours
	}
	m.tree.Event(hd, e)
	if ours {
		m.tally.Push(e)
	}
	if d, ok := e.Payload.(session.AssistantMessage); ok {
		if d.Usage != nil {
			m.turnUsage = m.turnUsage.Add(*d.Usage)
		}
		if ours {
			m.commitStep(d.Message)
		}
		return
	}
	if !ours {
		return
	}
	switch d := e.Payload.(type) {
	case session.StepStart:
		// Children that settled in the last step go to the scrollback
		// before the answer they led to.
		if !m.tree.Running() {
			m.flushTree()
		}
	case session.AssistantChunk:
		switch d.Chunk.Type {
		case llm.ChunkTextDelta:
			appendLive(&m.live.text, d.Chunk.Delta)
		case llm.ChunkReasoningDelta:
			m.live.reasoning += len(d.Chunk.Delta)
			appendLive(&m.live.thinking, d.Chunk.Delta)
		}
	case session.LLMRetry:
		// A retried attempt's text was never an answer.
		m.live.text.Reset()
		m.live.thinking.Reset()
		m.live.reasoning = 0
		m.commit(m.st.warn.Render(fmt.Sprintf("  ⟳ %s, retry %d/%d in %d ms", termsafe.EscapeLine(string(d.Failure.Code)), d.Retry, d.MaxRetries, d.DelayMs)))
	case session.ToolCall:
		m.live.calls = append(m.live.calls, &call{id: d.CallID, name: d.Name, args: d.Arguments})
	case session.ToolResult:
		for i, c := range m.live.calls {
			if c.id == d.CallID {
				m.live.calls = append(m.live.calls[:i], m.live.calls[i+1:]...)
				m.todo.Take(m.root, c.name, c.args, d.IsError)
				m.commit(m.toolBlock(c, d))
				break
			}
		}
	case session.HookRun:
		m.commit(m.hookBlock(d))
	case session.TurnEnd:
		if d.Reason == session.ReasonCompleted {
			return
		}
		line := "turn ended: " + string(d.Reason)
		if d.By != "" {
			line += " by " + d.By
		}
		if d.Failure != nil {
			line += fmt.Sprintf(" (%s: %s)", d.Failure.Code, d.Failure.Message)
		}
		m.commit(m.st.warn.Render("  " + termsafe.EscapeLine(line)))
	}
}

// commitStep sends a finished step's reasoning (folded) and answer
// (Markdown) to the scrollback.
func (m *Model) commitStep(msg llm.Message) {
	var text, thought strings.Builder
	for _, b := range msg.Content {
		switch b.Type {
		case llm.BlockText:
			text.WriteString(b.Text)
		case llm.BlockReasoning:
			thought.WriteString(b.Text)
		}
	}
	reasoning := thought.Len()
	if reasoning == 0 {
		reasoning = m.live.reasoning
	}
	switch {
	case reasoning > 0 && m.unfold && thought.Len() > 0:
		m.commit(m.st.dim.Render("  ▾ reasoning\n" + termtext.Wrap(termsafe.Escape(strings.TrimSpace(thought.String())), max(m.width-2, 10))))
	case reasoning > 0:
		m.commit(m.st.dim.Render(fmt.Sprintf("  ▸ reasoning (%s, folded; Ctrl-O unfolds)", termtext.Bytes(reasoning))))
	}
	if t := strings.TrimSpace(text.String()); t != "" {
		m.commit(m.md.Render(termsafe.Escape(t)))
	}
	m.live.text.Reset()
	m.live.thinking.Reset()
	m.live.reasoning = 0
}

// Max lines of a diff or a result preview in the scrollback.
const maxDiffLines = 12

// toolBlock is a settled tool call: status, name, summary, a one-line
// result summary, and for a successful edit or write its diff.
func (m *Model) toolBlock(c *call, r session.ToolResult) string {
	mark := m.st.ok.Render("✓")
	if r.IsError {
		mark = m.st.bad.Render("✗")
	}
	head := "  " + mark + " " + termsafe.EscapeLine(c.name)
	if sum := callSummary(c.name, c.args); sum != "" {
		head += " " + m.st.dim.Render(termsafe.EscapeLine(sum))
	}
	lines := []string{termtext.Fit(head, m.width)}
	if m.unfold && strings.TrimSpace(r.Content) != "" {
		lines = append(lines, m.fullResult(r.Content)...)
	} else if rs := resultSummary(r.Content); rs != "" {
		lines = append(lines, termtext.Fit("    "+m.st.dim.Render("→ "+rs), m.width))
		if strings.Contains(strings.TrimRight(r.Content, "\n"), "\n") {
			m.folded = append(m.folded, folded{head: head, content: r.Content})
			if len(m.folded) > maxFolded {
				m.folded = m.folded[len(m.folded)-maxFolded:]
			}
		}
	}
	if !r.IsError {
		lines = append(lines, m.diff(c)...)
	}
	return strings.Join(lines, "\n")
}

// callSummary is a call's one-line summary (ToolSummary, not escaped);
// for edit and write only the path and size, since the diff shows the
// text.
func callSummary(name, args string) string {
	if name == "edit" || name == "write" {
		var a struct {
			Path    string  `json:"path"`
			Content *string `json:"content"`
		}
		if json.Unmarshal([]byte(args), &a) == nil && a.Path != "" {
			s := "path=" + termtext.Cut(termtext.OneLine(a.Path), toolsummary.MaxValue)
			if a.Content != nil {
				s += " (" + termtext.Bytes(len(*a.Content)) + ")"
			}
			return s
		}
	}
	if s := toolsummary.Of(args); s != "{}" {
		return s
	}
	return ""
}

// resultSummary is a result's first non-empty line (escaped, cut) and
// how many lines it has.
func resultSummary(content string) string {
	lines := strings.Split(strings.TrimRight(content, "\n"), "\n")
	first := ""
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			first = strings.TrimSpace(l)
			break
		}
	}
	// A tab is spacing (read's "N<TAB>line"), not a character to show as
	// \t (issue 48).
	first = strings.ReplaceAll(first, "\t", "  ")
	s := termsafe.EscapeLine(termtext.Cut(first, 100))
	if len(lines) > 1 {
		s += fmt.Sprintf(" (%d lines)", len(lines))
	}
	return s
}

// diff shows an edit's change (- old, + new) or a write's first lines.
func (m *Model) diff(c *call) []string {
	var a struct {
		Path      string `json:"path"`
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
		Content   string `json:"content"`
	}
	if json.Unmarshal([]byte(c.args), &a) != nil {
		return nil
	}
	var out []string
	// The diff computed just before the call ran (feed.beforeRun), against
	// the file as it was then, removed lines too: in every mode.
	if d, ok := m.asked[c.name+"\x00"+c.args]; ok {
		delete(m.asked, c.name+"\x00"+c.args)
		shown, more := callpreview.Capped(d, callpreview.MaxSettled)
		for _, l := range shown {
			switch l.Kind {
			case linediff.Gap:
				out = append(out, m.st.dim.Render(fmt.Sprintf("    ⋯ %d unchanged lines", l.N)))
			case callpreview.FileHead:
				out = append(out, termtext.Fit(m.st.warn.Render("  "+termsafe.EscapeLine(l.Text)), m.width))
			case linediff.Del:
				out = append(out, termtext.Fit(m.st.bad.Render("    - "+termsafe.EscapeLine(l.Text)), m.width))
			case linediff.Add:
				out = append(out, termtext.Fit(m.st.ok.Render("    + "+termsafe.EscapeLine(l.Text)), m.width))
			default:
				out = append(out, termtext.Fit(m.st.dim.Render("      "+termsafe.EscapeLine(l.Text)), m.width))
			}
		}
		if more > 0 {
			out = append(out, m.st.dim.Render(fmt.Sprintf("    … %d more lines", more)))
		}
		return out
	}
	add := func(prefix string, text string, st func(...string) string) {
		ls := strings.Split(strings.TrimRight(text, "\n"), "\n")
		for i, l := range ls {
			if i == maxDiffLines {
				out = append(out, m.st.dim.Render(fmt.Sprintf("    … %d more lines", len(ls)-maxDiffLines)))
				break
			}
			out = append(out, termtext.Fit(st("    "+prefix+termsafe.EscapeLine(l)), m.width))
		}
	}
	switch c.name {
	case "edit":
		add("- ", a.OldString, m.st.bad.Render)
		add("+ ", a.NewString, m.st.ok.Render)
	case "write":
		add("+ ", a.Content, m.st.ok.Render)
	}
	return out
}

// maxReplay bounds the messages a resumed session shows at start: the
// latest ones; `reins log` renders the whole.
const maxReplay = 40

// replay shows a resumed session's conversation: its latest prompts and
// answers.
func (m *Model) replay(events []session.Event) {
	type msg struct {
		user bool
		text string
	}
	var msgs []msg
	for _, e := range events {
		switch d := e.Payload.(type) {
		case session.UserMessage:
			if d.Message.Role == llm.RoleUser && d.Notice == "" {
				if t := llm.BlocksText(d.Message.Content); t != "" {
					msgs = append(msgs, msg{true, t})
				}
			}
		case session.AssistantMessage:
			if t := strings.TrimSpace(llm.BlocksText(d.Message.Content)); t != "" {
				msgs = append(msgs, msg{false, t})
			}
		}
	}
	if n := len(msgs) - maxReplay; n > 0 {
		m.say(fmt.Sprintf("… %d earlier messages (reins log %s shows them)", n, m.root))
		msgs = msgs[n:]
	}
	for _, x := range msgs {
		if x.user {
			// The text typed, and a line for each file or output it
			// carried, as when it was sent (not the files' bodies).
			typed, notes := attach.Typed(x.text)
			m.commit(m.st.user.Render("› " + termsafe.Escape(typed)))
			for _, n := range notes {
				m.say("  " + n)
			}
		} else {
			m.commit(m.md.Render(termsafe.Escape(x.text)))
		}
	}
}

// Bounds of what Ctrl-O expands: the latest folded results, and the
// lines of each shown (reins log shows the whole).
const (
	maxFolded      = 20
	maxExpandLines = 400
)

// folded is a result shown as one summary line, kept for Ctrl-O.
type folded struct{ head, content string }

// fullResult is a result's text as the expanded transcript shows it:
// escaped, wrapped, at most maxExpandLines lines.
func (m *Model) fullResult(content string) []string {
	ls := strings.Split(strings.TrimRight(content, "\n"), "\n")
	var out []string
	for i, l := range ls {
		if i == maxExpandLines {
			out = append(out, m.st.dim.Render(fmt.Sprintf("    … %d more lines (reins log %s shows them)", len(ls)-i, m.root)))
			break
		}
		out = append(out, hang(termsafe.EscapeLine(l), "    │ ", "    │ ", m.width)...)
	}
	return out
}

// expand prints the results folded since the last expansion, whole.
func (m *Model) expand() {
	if len(m.folded) == 0 {
		return
	}
	b := []string{m.st.dim.Render(fmt.Sprintf("  ▾ %d folded results", len(m.folded)))}
	for _, f := range m.folded {
		b = append(b, termtext.Fit(f.head, m.width))
		b = append(b, m.fullResult(f.content)...)
	}
	m.folded = nil
	m.commit(strings.Join(b, "\n"))
}

// hookBlock is a hook's run as the scrollback shows it, like a tool call:
// the event and command, how it ended, and what it told the model or the
// user (all the hook's text escaped, cut).
func (m *Model) hookBlock(d session.HookRun) string {
	head := "hook " + d.Event
	if d.Tool != "" {
		head += " " + d.Tool
	}
	head += ": " + termtext.Cut(termsafe.EscapeLine(d.Command), 80)
	status := fmt.Sprintf("exit %d, %d ms", d.Exit, d.DurationMs)
	if d.Decision != "" {
		status = d.Decision + ", " + status
	}
	if !d.Confined {
		status += ", unconfined"
	}
	mark, style := "✓", m.st.dim
	if d.Problem != "" || (d.Exit != 0 && d.Exit != 2) {
		mark, style = "!", m.st.warn
	}
	lines := []string{style.Render("  " + mark + " " + head + " (" + status + ")")}
	for _, t := range []string{d.Problem, d.ToModel, d.ToUser} {
		if t != "" {
			lines = append(lines, m.st.dim.Render("    → "+termtext.Cut(termsafe.EscapeLine(t), 200)))
		}
	}
	return strings.Join(lines, "\n")
}

// appendLive adds a delta of the streaming answer or thinking to b,
// escaped; past maxLiveText it keeps the last half of that.
func appendLive(b *strings.Builder, delta string) {
	b.WriteString(termsafe.Escape(delta))
	if b.Len() > maxLiveText {
		s := b.String()
		b.Reset()
		b.WriteString(termtext.LastBytes(s, maxLiveText/2))
	}
}
