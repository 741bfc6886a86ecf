// Package tui is reins's interactive terminal: `reins` with no task on a
// terminal. It is a Bubble Tea program over one harness session: a prompt
// editor, the answer streamed and then shown as Markdown, tool calls with
// their results (edits as a diff), retries, the live tree of children and
// background jobs, approvals, slash commands and a status line with the
// session's usage and cost. Everything it shows comes from the session
// log's events (the harness's observer), so what the screen says and what
// `reins log` renders cannot disagree.
package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
)

// Bounds of what the screen holds.
const (
	maxQueued    = 20       // prompts typed while a turn runs
	maxHistory   = 200      // prompts up/down recalls
	maxPrompt    = 64 << 10 // characters in the editor
	maxLiveText  = 64 << 10 // bytes of the streaming answer kept for the live view
	maxPastJobs  = 100      // settled background jobs /jobs lists
	minLiveLines = 3
)

// Options configure the interactive session.
type Options struct {
	// Harness is the composition root; New sets its Observe (keeping any
	// observer already set) to feed the screen.
	Harness *harness.Harness
	// Session is the template of every session the screen opens (at start,
	// /new, /resume): model, agent, limits, permission. Its Resume names
	// the session to continue at start.
	Session harness.SessionOptions
	// Ask makes write, edit, bash (every tool that needs more than
	// read-only) ask the user first; false runs whatever --permission
	// allows (--yes).
	Ask bool
	// BaseURL is --base-url, for /model.
	BaseURL string
	NoColor bool
	// Now is the clock of elapsed times; time.Now when nil.
	Now func() time.Time
}

// Model is the Bubble Tea model of the interactive session.
type Model struct {
	opts Options
	h    *harness.Harness
	feed *feed
	st   styles
	now  func() time.Time

	// sess is the session prompts go to; root its id.
	sess *harness.Session
	root string

	width, height int
	editor        textarea.Model
	history       []string
	hpos          int    // index into history while browsing; len(history) when not
	draft         string // the editor's text before browsing began
	queue         []string

	running   bool
	turnSeq   int
	cancel    context.CancelCauseFunc
	turnStart time.Time
	wg        sync.WaitGroup

	live      liveStep
	tree      *tree
	pastJobs  []*node
	approvals []*approval
	always    map[string]bool // tools allowed for this session

	usage     llm.Usage // completed turns of this session, children included
	turnUsage llm.Usage // the running turn so far, children included

	ctrlC    bool // Ctrl-C on an empty prompt once: the next one exits
	unfold   bool // Ctrl-O: show reasoning text rather than its size
	notice   string
	quitting bool

	print func(string) // commits text to the scrollback, in order
	md    *markdown
	// liveMD caches the Markdown of the streaming answer's finished
	// paragraphs (liveAnswer).
	liveMD struct {
		src   string
		width int
		out   string
	}
}

// liveStep is what the running step has streamed so far.
type liveStep struct {
	text      strings.Builder // escaped answer text (the tail, bounded)
	reasoning int             // bytes of reasoning, shown folded
	thinking  strings.Builder // escaped reasoning text (the tail, bounded), shown unfolded
	calls     []*call         // tool calls not answered yet
}

type call struct {
	id, name, args string
}

// Messages of the model.
type (
	feedMsg struct{ items []item }
	tickMsg time.Time
)

// New opens the first session (opts.Session.Resume, or a new one) and
// returns the model; print receives every committed block of text, in
// order (Run sends them to the terminal above the live screen).
func New(opts Options, print func(string)) (*Model, error) {
	m := &Model{
		opts: opts, h: opts.Harness, feed: newFeed(), st: newStyles(opts.NoColor), now: opts.Now,
		tree: newTree(), always: map[string]bool{}, print: print, width: 80, height: 24,
	}
	if m.now == nil {
		m.now = time.Now
	}
	m.md = newMarkdown(opts.NoColor)
	prev := m.h.Observe
	m.h.Observe = func(hd session.Header, e session.Event) {
		if prev != nil {
			prev(hd, e)
		}
		m.feed.observe(hd, e)
	}
	if opts.Ask {
		m.opts.Session.Approve = m.feed.ask
	}
	m.editor = newEditor(opts.NoColor)
	sess, err := m.h.NewSession(m.opts.Session)
	if err != nil {
		return nil, err
	}
	m.setSession(sess)
	m.commit(m.banner())
	if sess.Resumed != nil {
		m.replay(sess.Resumed.Events)
	}
	return m, nil
}

func newEditor(noColor bool) textarea.Model {
	ed := textarea.New()
	ed.ShowLineNumbers = false
	ed.Prompt = "› "
	ed.Placeholder = "Ask reins… (Enter sends, Alt-Enter new line, /help)"
	ed.CharLimit = maxPrompt
	ed.DynamicHeight = true
	ed.MinHeight = 1
	ed.MaxHeight = 8
	ed.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "shift+enter", "ctrl+j"))
	// Ctrl-D exits; the clipboard is the terminal's (bracketed paste).
	ed.KeyMap.DeleteCharacterForward = key.NewBinding(key.WithKeys("delete"))
	ed.KeyMap.Paste = key.NewBinding(key.WithDisabled())
	// A steady cursor: a blinking one redraws the screen twice a second
	// for nothing.
	s := textarea.DefaultDarkStyles()
	s.Cursor.Blink = false
	if noColor {
		plain := textarea.StyleState{}
		s.Focused, s.Blurred, s.Cursor.Color = plain, plain, nil
	}
	ed.SetStyles(s)
	ed.Focus()
	return ed
}

func (m *Model) setSession(s *harness.Session) {
	m.sess, m.root = s, s.Log.Header().ID
	m.usage, m.turnUsage = llm.Usage{}, llm.Usage{}
	if s.Resumed != nil {
		m.usage = loggedUsage(s.Resumed.Events)
	}
	m.tree, m.pastJobs = newTree(), nil
	m.always = map[string]bool{}
}

// loggedUsage is what a session's log says it used: its own steps and
// its children's totals (subagent/end).
func loggedUsage(events []session.Event) llm.Usage {
	var u llm.Usage
	for _, e := range events {
		switch e.Type {
		case session.TypeAssistantMessage:
			var d session.AssistantMessage
			if e.Decode(&d) == nil && d.Usage != nil {
				u = u.Add(*d.Usage)
			}
		case session.TypeSubagentEnd:
			var d session.SubagentEnd
			if e.Decode(&d) == nil && d.Usage != nil {
				u = u.Add(*d.Usage)
			}
		}
	}
	return u
}

// modelName is PROVIDER/MODEL of the running session.
func (m *Model) modelName() string {
	return m.sess.Agent.Provider + "/" + m.sess.Agent.ModelName
}

func (m *Model) banner() string {
	hd := m.sess.Log.Header()
	how := "new session"
	if m.sess.Resumed != nil {
		how = "resumed session"
	}
	agentName := ""
	if hd.Agent != "" {
		agentName = " · agent " + termsafe.EscapeLine(hd.Agent)
	}
	perm := string(m.sess.Agent.Env.Permission)
	ask := ""
	if m.opts.Ask {
		ask = ", asks before writes"
	}
	return m.st.bold.Render("reins") + m.st.dim.Render(fmt.Sprintf(" · %s · %s %s%s · %s%s · /help",
		termsafe.EscapeLine(m.modelName()), how, hd.ID, agentName, perm, ask))
}

// commit sends text to the scrollback.
func (m *Model) commit(s string) {
	if m.print != nil {
		m.print(s)
	}
}

// Init starts waiting for the session's events.
func (m *Model) Init() tea.Cmd { return m.waitFeed() }

// waitFeed is the one outstanding read of the feed.
func (m *Model) waitFeed() tea.Cmd {
	f := m.feed
	return func() tea.Msg {
		select {
		case <-f.wake:
			return feedMsg{f.take()}
		case <-f.done:
			return nil
		}
	}
}

// Update handles keys, the session's events and the end of turns.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.editor.SetWidth(max(msg.Width, 10))
		m.md.setWidth(msg.Width)
		return m, nil
	case feedMsg:
		return m, tea.Batch(m.items(msg.items), m.waitFeed())
	case tickMsg:
		if m.running {
			return m, tick()
		}
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.InterruptMsg:
		return m, m.quit()
	case tea.PasteMsg:
		m.ctrlC = false
		if len(m.approvals) > 0 {
			return m, nil
		}
	}
	var cmd tea.Cmd
	m.editor, cmd = m.editor.Update(msg)
	return m, cmd
}

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// key handles one key press: approvals first, then the keys of the
// session, then the editor.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	if s != "ctrl+c" && m.ctrlC {
		m.ctrlC, m.notice = false, ""
	}
	if len(m.approvals) > 0 {
		switch s {
		case "y", "enter":
			m.answer(true, false)
		case "a":
			m.answer(true, true)
		case "n", "esc":
			m.answer(false, false)
		case "ctrl+c":
			m.answer(false, false)
			m.cancelTurn()
		case "ctrl+d":
			return m.quit()
		}
		return nil
	}
	switch s {
	case "ctrl+d":
		return m.quit()
	case "ctrl+o":
		m.unfold = !m.unfold
		return nil
	case "esc":
		if m.running {
			m.cancelTurn()
		}
		return nil
	case "ctrl+c":
		switch {
		case m.running:
			m.cancelTurn()
		case m.editor.Value() != "":
			m.editor.Reset()
			m.hpos = len(m.history)
		case m.ctrlC:
			return m.quit()
		default:
			m.ctrlC = true
			m.notice = "press Ctrl-C again to exit (or Ctrl-D)"
		}
		return nil
	case "enter":
		return m.submit()
	case "up":
		if m.editor.Line() == 0 && m.hpos > 0 {
			if m.hpos == len(m.history) {
				m.draft = m.editor.Value()
			}
			m.hpos--
			m.editor.SetValue(m.history[m.hpos])
			return nil
		}
	case "down":
		if m.hpos < len(m.history) && m.editor.Line() == m.editor.LineCount()-1 {
			m.hpos++
			if m.hpos == len(m.history) {
				m.editor.SetValue(m.draft)
			} else {
				m.editor.SetValue(m.history[m.hpos])
			}
			return nil
		}
	}
	var cmd tea.Cmd
	m.editor, cmd = m.editor.Update(k)
	return cmd
}

// submit sends the editor's text: a slash command, a prompt, or (while a
// turn runs) a queued prompt.
func (m *Model) submit() tea.Cmd {
	text := strings.TrimSpace(m.editor.Value())
	if text == "" {
		return nil
	}
	m.editor.Reset()
	m.notice = ""
	if len(m.history) == 0 || m.history[len(m.history)-1] != text {
		m.history = append(m.history, text)
		if len(m.history) > maxHistory {
			m.history = m.history[len(m.history)-maxHistory:]
		}
	}
	m.hpos, m.draft = len(m.history), ""
	if strings.HasPrefix(text, "/") {
		return m.slash(text)
	}
	if m.running {
		if len(m.queue) >= maxQueued {
			m.notice = fmt.Sprintf("the queue is full (%d prompts); wait for the turn to end", maxQueued)
			m.editor.SetValue(text)
			return nil
		}
		m.queue = append(m.queue, text)
		m.notice = fmt.Sprintf("queued (%d waiting)", len(m.queue))
		return nil
	}
	return m.startTurn(text)
}

// startTurn runs a turn for prompt on a goroutine of its own; its events
// and then its end come through the feed, in order.
func (m *Model) startTurn(prompt string) tea.Cmd {
	m.commit(m.st.user.Render("› " + termsafe.Escape(prompt)))
	ctx, cancel := context.WithCancelCause(context.Background())
	m.running, m.cancel, m.turnStart = true, cancel, m.now()
	m.turnSeq++
	seq, sess, f := m.turnSeq, m.sess, m.feed
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer cancel(nil)
		res := sess.Run(ctx, prompt)
		f.push(item{done: &turnDone{seq: seq, res: res}})
	}()
	return tick()
}

// cancelTurn aborts the running turn; the log records it aborted by the
// user (agent.ErrAbortedByUser).
func (m *Model) cancelTurn() {
	if m.running && m.cancel != nil {
		m.cancel(agent.ErrAbortedByUser)
		m.notice = "cancelling…"
	}
}

func (m *Model) turnDone(msg *turnDone) tea.Cmd {
	if msg.seq != m.turnSeq || !m.running {
		return nil
	}
	m.running, m.cancel = false, nil
	m.usage = m.usage.Add(msg.res.Usage)
	m.turnUsage = llm.Usage{}
	for _, a := range m.approvals { // a cancelled turn's asks are moot
		a.reply <- false
	}
	m.approvals = nil
	m.flushTree()
	m.live = liveStep{}
	m.notice = ""
	if m.quitting {
		return nil
	}
	if len(m.queue) > 0 {
		next := m.queue[0]
		m.queue = m.queue[1:]
		return m.startTurn(next)
	}
	return nil
}

// flushTree moves a settled tree to the scrollback (its jobs stay
// listed for /jobs) and starts an empty one.
func (m *Model) flushTree() {
	if m.tree.empty() {
		return
	}
	m.commit(strings.Join(m.tree.render(m.root, m.now(), m.width, m.st), "\n"))
	m.pastJobs = append(m.pastJobs, m.tree.jobs()...)
	if len(m.pastJobs) > maxPastJobs {
		m.pastJobs = m.pastJobs[len(m.pastJobs)-maxPastJobs:]
	}
	m.tree = newTree()
}

// answer replies to the first pending approval.
func (m *Model) answer(ok, always bool) {
	a := m.approvals[0]
	m.approvals = m.approvals[1:]
	if always {
		m.always[a.name] = true
	}
	verdict := "allowed"
	switch {
	case always:
		verdict = "allowed for this session"
	case !ok:
		verdict = "rejected"
	}
	m.commit(m.st.dim.Render(fmt.Sprintf("  %s %s: %s", termsafe.EscapeLine(a.name), termsafe.EscapeLine(callSummary(a.name, string(a.args))), verdict)))
	a.reply <- ok
	// Later asks for a tool now always allowed need no question.
	rest := m.approvals[:0]
	for _, b := range m.approvals {
		if m.always[b.name] {
			b.reply <- true
			continue
		}
		rest = append(rest, b)
	}
	m.approvals = rest
}

// quit ends the program; Run then cancels a running turn and closes the
// session.
func (m *Model) quit() tea.Cmd {
	m.quitting = true
	for _, a := range m.approvals {
		a.reply <- false
	}
	m.approvals = nil
	m.cancelTurn()
	return tea.Quit
}

// items applies a batch of the feed.
func (m *Model) items(its []item) tea.Cmd {
	var cmds []tea.Cmd
	for _, it := range its {
		if it.done != nil {
			cmds = append(cmds, m.turnDone(it.done))
			continue
		}
		if it.approve != nil {
			if m.always[it.approve.name] {
				it.approve.reply <- true
				continue
			}
			m.approvals = append(m.approvals, it.approve)
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
	if !ours && m.tree.bySess[hd.ID] == nil {
		return // an earlier session's late event (/new), or not ours
	}
	m.tree.event(hd, e)
	if e.Type == session.TypeAssistantMessage {
		var d session.AssistantMessage
		if e.Decode(&d) == nil && d.Usage != nil {
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
	switch e.Type {
	case session.TypeStepStart:
		// Children that settled in the last step go to the scrollback
		// before the answer they led to.
		if !m.tree.running() {
			m.flushTree()
		}
	case session.TypeAssistantChunk:
		var d session.AssistantChunk
		if e.Decode(&d) != nil {
			return
		}
		switch d.Chunk.Type {
		case llm.ChunkTextDelta:
			m.live.text.WriteString(termsafe.Escape(d.Chunk.Delta))
			if m.live.text.Len() > maxLiveText {
				s := m.live.text.String()
				m.live.text.Reset()
				m.live.text.WriteString(lastBytes(s, maxLiveText/2))
			}
		case llm.ChunkReasoningDelta:
			m.live.reasoning += len(d.Chunk.Delta)
			m.live.thinking.WriteString(termsafe.Escape(d.Chunk.Delta))
			if m.live.thinking.Len() > maxLiveText {
				t := m.live.thinking.String()
				m.live.thinking.Reset()
				m.live.thinking.WriteString(lastBytes(t, maxLiveText/2))
			}
		}
	case session.TypeLLMRetry:
		var d session.LLMRetry
		if e.Decode(&d) != nil {
			return
		}
		// A retried attempt's text was never an answer.
		m.live.text.Reset()
		m.live.thinking.Reset()
		m.live.reasoning = 0
		m.commit(m.st.warn.Render(fmt.Sprintf("  ⟳ %s, retry %d/%d in %d ms", termsafe.EscapeLine(d.Failure.Code), d.Retry, d.MaxRetries, d.DelayMs)))
	case session.TypeToolCall:
		var d session.ToolCall
		if e.Decode(&d) == nil {
			m.live.calls = append(m.live.calls, &call{id: d.CallID, name: d.Name, args: d.Arguments})
		}
	case session.TypeToolResult:
		var d session.ToolResult
		if e.Decode(&d) != nil {
			return
		}
		for i, c := range m.live.calls {
			if c.id == d.CallID {
				m.live.calls = append(m.live.calls[:i], m.live.calls[i+1:]...)
				m.commit(m.toolBlock(c, d))
				break
			}
		}
	case session.TypeTurnEnd:
		var d session.TurnEnd
		if e.Decode(&d) != nil || d.Reason == session.ReasonCompleted {
			return
		}
		line := "turn ended: " + d.Reason
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
		m.commit(m.st.dim.Render("  ▾ reasoning\n" + wrap(termsafe.Escape(strings.TrimSpace(thought.String())), max(m.width-2, 10))))
	case reasoning > 0:
		m.commit(m.st.dim.Render(fmt.Sprintf("  ▸ reasoning (%s, folded; Ctrl-O unfolds)", byteSize(reasoning))))
	}
	if t := strings.TrimSpace(text.String()); t != "" {
		m.commit(m.md.render(termsafe.Escape(t)))
	}
	m.live.text.Reset()
	m.live.thinking.Reset()
	m.live.reasoning = 0
}

func byteSize(n int) string {
	if n >= 1024 {
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%d bytes", n)
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
	lines := []string{fitLine(head, m.width)}
	if rs := resultSummary(r.Content); rs != "" {
		lines = append(lines, fitLine("    "+m.st.dim.Render("→ "+rs), m.width))
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
			s := "path=" + Cut(oneLine(a.Path), MaxSummaryValue)
			if a.Content != nil {
				s += " (" + byteSize(len(*a.Content)) + ")"
			}
			return s
		}
	}
	if s := ToolSummary(args); s != "{}" {
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
	s := termsafe.EscapeLine(Cut(first, 100))
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
	add := func(prefix string, text string, st func(...string) string) {
		ls := strings.Split(strings.TrimRight(text, "\n"), "\n")
		for i, l := range ls {
			if i == maxDiffLines {
				out = append(out, m.st.dim.Render(fmt.Sprintf("    … %d more lines", len(ls)-maxDiffLines)))
				break
			}
			out = append(out, fitLine(st("    "+prefix+termsafe.EscapeLine(l)), m.width))
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
		switch e.Type {
		case session.TypeUserMessage:
			var d session.UserMessage
			if e.Decode(&d) == nil && d.Message.Role == llm.RoleUser {
				if t := llm.BlocksText(d.Message.Content); t != "" {
					msgs = append(msgs, msg{true, t})
				}
			}
		case session.TypeAssistantMessage:
			var d session.AssistantMessage
			if e.Decode(&d) == nil {
				if t := strings.TrimSpace(llm.BlocksText(d.Message.Content)); t != "" {
					msgs = append(msgs, msg{false, t})
				}
			}
		}
	}
	if n := len(msgs) - maxReplay; n > 0 {
		m.say(fmt.Sprintf("… %d earlier messages (reins log %s shows them)", n, m.root))
		msgs = msgs[n:]
	}
	for _, x := range msgs {
		if x.user {
			m.commit(m.st.user.Render("› " + termsafe.Escape(x.text)))
		} else {
			m.commit(m.md.render(termsafe.Escape(x.text)))
		}
	}
}

// View draws the live part of the screen: what the running step streams,
// calls in flight, the tree of children, an approval question, the editor
// and the status line. Finished work is in the scrollback.
func (m *Model) View() tea.View {
	var b []string
	w := m.width
	switch {
	case m.live.reasoning > 0 && m.unfold:
		b = append(b, m.st.dim.Render("▾ reasoning…\n"+tail(wrap(lastBytes(m.live.thinking.String(), 4096), max(w-2, 10)), 6)))
	case m.live.reasoning > 0:
		b = append(b, m.st.dim.Render(fmt.Sprintf("▸ reasoning… (%s, folded; Ctrl-O unfolds)", byteSize(m.live.reasoning))))
	}
	if t := m.live.text.String(); t != "" {
		room := max(minLiveLines, m.height-12-min(len(m.tree.nodes), m.height/2)-min(len(m.live.calls), m.height/2))
		b = append(b, tail(m.liveAnswer(t, room), room))
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
		b = append(b, fitLine(m.st.running.Render(line), w))
	}
	if !m.tree.empty() {
		lines := m.tree.render(m.root, m.now(), w, m.st)
		if n := room / 2; len(lines) > n {
			lines = append(lines[:n-1], m.st.dim.Render(fmt.Sprintf("… and %d more lines of children", len(lines)-n+1)))
		}
		b = append(b, m.st.bold.Render("children"))
		b = append(b, lines...)
	}
	if len(m.approvals) > 0 {
		a := m.approvals[0]
		q := fmt.Sprintf("? allow %s %s", termsafe.EscapeLine(a.name), termsafe.EscapeLine(callSummary(a.name, string(a.args))))
		b = append(b, fitLine(m.st.warn.Render(q), w))
		b = append(b, fitLine("  [y] once  [a] "+termsafe.EscapeLine(a.name)+" for this session  [n] reject", w))
	}
	if m.notice != "" {
		b = append(b, fitLine(m.st.dim.Render(m.notice), w))
	}
	b = append(b, m.editor.View(), m.status())
	v := tea.NewView(strings.Join(b, "\n"))
	// The window title says what the session waits for, so a terminal
	// tab shows a question even when another window has the focus.
	v.WindowTitle = "reins"
	switch {
	case len(m.approvals) > 0:
		v.WindowTitle = "reins · approve " + termsafe.EscapeLine(Cut(m.approvals[0].name, 40)) + "?"
	case m.running:
		v.WindowTitle = "reins · running"
	}
	return v
}

// liveAnswer is the streaming answer as shown: its finished paragraphs
// (up to the last blank line) as Markdown, rendered again only when a
// paragraph ends, then the paragraph being written, wrapped. Only the
// tail can show, so no more than fills room lines is rendered or
// wrapped: a long answer costs a frame what a short one does.
func (m *Model) liveAnswer(t string, room int) string {
	w := max(m.width-2, 10)
	n := max(room*w*4, 4096)
	cut := strings.LastIndex(t, "\n\n")
	if cut < 0 {
		return wrap(lastBytes(t, n), w)
	}
	done, rest := t[:cut], lastBytes(strings.TrimLeft(t[cut:], "\n"), n)
	if done != m.liveMD.src || m.width != m.liveMD.width {
		// From a paragraph boundary, so the rendered text stays the same
		// until the next paragraph ends.
		src := done
		if len(src) > n {
			tailStart := len(src) - n
			if i := strings.Index(src[tailStart:], "\n\n"); i >= 0 {
				src = src[tailStart+i+2:]
			} else {
				src = lastBytes(src, n)
			}
		}
		m.liveMD.src, m.liveMD.width, m.liveMD.out = done, m.width, m.md.render(src)
	}
	if rest == "" {
		return m.liveMD.out
	}
	return m.liveMD.out + "\n" + wrap("  "+rest, w)
}

// status is the bottom line: model, session, usage and cost, state.
func (m *Model) status() string {
	u := m.usage.Add(m.turnUsage)
	parts := []string{termsafe.EscapeLine(m.modelName()), shortID(m.root), usageText(u)}
	switch {
	case len(m.approvals) > 0:
		parts = append(parts, "waiting for approval")
	case m.running:
		parts = append(parts, "running "+formatElapsed(m.now().Sub(m.turnStart))+" · Esc cancels")
	}
	if n := len(m.queue); n > 0 {
		parts = append(parts, fmt.Sprintf("%d queued", n))
	}
	return fitLine(m.st.dim.Render(strings.Join(parts, " · ")), m.width)
}

// lastBytes is the last n bytes of s or fewer, starting on a rune.
func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	for len(s) > 0 && s[0]&0xC0 == 0x80 {
		s = s[1:]
	}
	return s
}

// shortID is a session id's first 20 bytes (its time and 4 random hex
// digits): a unique prefix in practice, and any unique prefix names a
// session.
func shortID(id string) string {
	if len(id) > 20 {
		return id[:20]
	}
	return id
}
