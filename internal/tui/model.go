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

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/childtree"
	"github.com/reinsdev/reins/internal/tui/editor"
	"github.com/reinsdev/reins/internal/tui/linediff"
	"github.com/reinsdev/reins/internal/tui/markdown"
	"github.com/reinsdev/reins/internal/tui/termtext"
	"github.com/reinsdev/reins/internal/tui/todopin"
)

// Bounds of what the screen holds.
const (
	maxQueued    = 20       // prompts typed while a turn runs
	maxHistory   = 200      // prompts up/down recalls
	maxPrompt    = 64 << 10 // characters in the editor
	maxLiveText  = 64 << 10 // bytes of the streaming answer kept for the live view
	maxPastJobs  = 100      // settled background jobs /jobs lists
	maxAsked     = 64       // file calls' diffs kept for their results
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
	// Width is the terminal's width at start (the header is drawn before
	// the program learns it); 80 when unknown.
	Width int
	// Now is the clock of elapsed times; time.Now when nil.
	Now func() time.Time
	// Trust, when set, lets the screen ask whether to trust an untrusted
	// folder whose own files were ignored (trust.go).
	Trust *TrustQuestion
	// FlushInput discards the input the terminal holds and nobody read
	// yet; called when an approval question comes to the front, so no
	// key typed (or planted) before it can answer it. Run sets it when
	// the input is a terminal.
	FlushInput func()
	// Prompt, when set, is sent as the first input, as if typed and
	// entered: the task of `reins "TASK"`, or /resume for a --resume
	// with no session (launch.go).
	Prompt string
	// PendingInput reports whether the terminal holds keys nobody read
	// yet; the folder question at launch defers itself when it does
	// (trust.go), so a prompt typed while reins started is not flushed.
	// Run sets it where the system can tell.
	PendingInput func() bool
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
	history       editor.History // the prompts sent, for Up and Down
	queue         []string

	running bool
	turnSeq int
	// afterTurn, when set, runs once the running turn is done (a custom
	// command's model gives way to the session's again).
	afterTurn func()
	cancel    context.CancelCauseFunc
	turnStart time.Time
	wg        sync.WaitGroup

	live      liveStep
	tree      *childtree.Tree
	pastJobs  []*childtree.Node
	approvals []*approval
	always    map[string]bool // tools allowed for this session
	// hosts are the domain questions answered this session, in order
	// (at most maxHosts): the mode notice tells the model the network
	// state they made.
	hosts []hostAnswer

	usage     llm.Usage // completed turns of this session, children included
	turnUsage llm.Usage // the running turn so far, children included
	// tally folds the root session's events with the one usage and
	// duration rule (session.Tally): /cost and usage say what reins log,
	// reins view and --json say.
	tally session.Tally

	todo   todopin.Pin // the model's todo list, above the prompt (internal/tui/todopin)
	folded []folded    // results shown folded, for Ctrl-O (latest maxFolded)
	mode   askMode     // Shift-Tab
	// picker is /model's or /resume's choice, while it is up (picker.go).
	picker *picker
	at     atList // @'s list of files as the user types (complete.go)
	// asked are the diffs file tools' calls made, computed just before
	// they ran (feed.beforeRun), by tool name and arguments, for the
	// settled call's block (at most maxAsked).
	asked   map[string][]linediff.Line
	trustQ  *trustAsk // the folder question, while it is up
	sentAny bool      // a prompt went to the session

	// undo is the history /undo and /rewind restore from; rewindQ the
	// /rewind question, while it is up (undo.go).
	undo    *undoState
	rewindQ *rewindAsk

	ctrlC    bool // Ctrl-C on an empty prompt once: the next one exits
	unfold   bool // Ctrl-O: show reasoning text rather than its size
	notice   string
	quitting bool

	print func(string) // commits text to the scrollback, in order
	md    *markdown.Renderer
	// liveMD caches the Markdown of the streaming answer's finished
	// paragraphs (liveAnswer).
	liveMD markdown.Live

	// shell is the running !command; shellCtx the outputs that go with
	// the next prompt (shell.go).
	shell    *shellRun
	shellCtx []string
	// ticking: a tick chain runs (startTick).
	ticking bool
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
		tree: childtree.New(), always: map[string]bool{}, print: print, width: 80, height: 24, mode: modeAsk,
	}
	if m.now == nil {
		m.now = time.Now
	}
	if opts.Width > 0 {
		m.width = opts.Width
	}
	m.md = markdown.New(opts.NoColor)
	m.attach()
	if opts.Ask {
		m.opts.Session.Approve = m.feed.ask
		m.opts.Session.Ask = m.feed.answerNote
		m.opts.Session.AskChild = m.feed.answerChild
		m.opts.Session.AskDomain = m.feed.askDomain
		m.opts.Session.AskGitWritable = m.feed.askGitWritable
	}
	// Every mode: a file tool's settled call shows the change it made.
	m.opts.Session.BeforeRun = m.feed.beforeRun
	m.editor = editor.New(opts.NoColor, maxPrompt)
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

// attach makes m.h report to the screen: its events, and the previews
// of the questions its tools ask.
func (m *Model) attach() {
	prev := m.h.Observe
	m.h.Observe = func(hd session.Header, e session.Event) {
		if prev != nil {
			prev(hd, e)
		}
		m.feed.observe(hd, e)
	}
	prevRemote := m.h.ObserveRemote
	m.h.ObserveRemote = func(hd session.Header, e session.Event) {
		if prevRemote != nil {
			prevRemote(hd, e)
		}
		m.feed.offer(hd, e) // out-of-process children's (feed.go)
	}
	// Why a child died while it started, under the parent's transcript.
	m.h.ChildNotice = func(line string) { m.feed.Offer(item{notice: line}) }
	cwd := m.h.Cwd
	m.feed.preview = func(name string, args json.RawMessage) *preview { return makePreview(cwd, name, args) }
}

func (m *Model) setSession(s *harness.Session) {
	m.sess, m.root = s, s.Log.Header().ID
	m.recordChanges(s)
	m.usage, m.turnUsage, m.tally = llm.Usage{}, llm.Usage{}, session.Tally{}
	if s.Resumed != nil {
		m.tally = session.TallyOf(s.Resumed.Events)
		m.usage = m.tally.Usage()
	}
	m.tree, m.pastJobs, m.folded = childtree.New(), nil, nil
	m.always, m.hosts = map[string]bool{}, nil
	m.holdRules()
	m.notifyMode() // the model knows the modes from the session's start
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
	parts := []string{termsafe.EscapeLine(m.modelName()), how + " " + hd.ID + agentName, perm + ask, "/help"}
	return m.st.bold.Render("reins") + m.st.dim.Render(breakParts(parts, m.width-len("reins")))
}

// breakParts joins parts with " · ", starting a new line (indented two
// cells) before a part that would pass width: the header broke mid-word
// at 80 columns when the terminal wrapped it (issue 48).
func breakParts(parts []string, width int) string {
	var b strings.Builder
	col := 0
	for _, p := range parts {
		w := termtext.Width(p) + 3
		if col > 0 && col+w > width {
			b.WriteString("\n ")
			col, width = 0, width+len("reins")-1
		}
		b.WriteString(" · " + p)
		col += w
	}
	return b.String()
}

// commit sends text to the scrollback.
func (m *Model) commit(s string) {
	if m.print != nil {
		m.print(s)
	}
}

// Init starts waiting for the session's events, and asks about an
// untrusted folder.
func (m *Model) Init() tea.Cmd {
	if t := m.opts.Trust; t != nil && t.AskNow && m.untrusted() {
		return tea.Batch(m.waitFeed(), m.askTrustAtLaunch(), m.firstPrompt())
	}
	return tea.Batch(m.waitFeed(), m.firstPrompt())
}

// waitFeed is the one outstanding read of the feed.
func (m *Model) waitFeed() tea.Cmd {
	f := m.feed
	return func() tea.Msg {
		select {
		case <-f.Wake():
			return feedMsg{f.Take()}
		case <-f.Done():
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
		m.md.SetWidth(msg.Width)
		return m, nil
	case feedMsg:
		return m, tea.Batch(m.items(msg.items), m.waitFeed())
	case tickMsg:
		if m.running || m.shell != nil {
			return m, tick()
		}
		m.ticking = false
		return m, nil
	case armMsg:
		m.arm(msg.a)
		return m, nil
	case withdrawMsg:
		return m, m.withdraw(msg.a)
	case trustArmMsg:
		if m.trustQ == msg.q {
			msg.q.armed, msg.q.deferred = true, false
		}
		return m, nil
	case rewindArmMsg:
		if m.rewindQ == msg.q {
			msg.q.armed = true
		}
		return m, nil
	case trustDeferMsg:
		if m.trustQ == msg.q {
			msg.q.deferred = true
		}
		return m, nil
	case firstPromptMsg:
		return m, m.send(msg.text)
	case completeMsg:
		m.completed(msg)
		return m, nil
	case shellDoneMsg:
		m.shellDone(msg)
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.InterruptMsg:
		return m, m.quit()
	case tea.PasteMsg:
		m.ctrlC = false
		if m.picker != nil { // pasted into the filter, one line
			m.picker.typed(termtext.OneLine(msg.Content))
			return m, nil
		}
		if len(m.approvals) > 0 && !m.approvals[0].rejecting {
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

// startTick starts the once-a-second redraw of the status line's elapsed
// times (a turn, a !command) unless it runs already: one chain of ticks
// however many things run.
func (m *Model) startTick() tea.Cmd {
	if m.ticking {
		return nil
	}
	m.ticking = true
	return tick()
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
		case "ctrl+c":
			m.answer(false, false)
			m.cancelTurn()
			return m.front()
		case "ctrl+d":
			return m.quit()
		}
		if !m.approvals[0].armed {
			return nil // typed before the question was shown: never an answer
		}
		if isDomain(m.approvals[0]) {
			return m.domainKey(s)
		}
		if isGit(m.approvals[0]) {
			if m.gitKey(s) {
				return m.front()
			}
			return nil
		}
		if m.approvals[0].rejecting {
			return m.instructKey(k)
		}
		switch s {
		case "y", "enter":
			m.answer(true, false)
		case "a":
			m.answer(true, true)
		case "n":
			m.startReject()
			return nil
		case "esc":
			m.answer(false, false)
		default:
			return nil
		}
		return m.front()
	}
	if m.picker != nil {
		return m.pickerKey(k)
	}
	// The /rewind question takes every key: y goes back, any other keeps.
	if m.rewindQ != nil {
		return m.rewindKey(s)
	}
	// The folder question takes y/n/x while the prompt is empty, so a
	// prompt being typed is not taken for an answer.
	if m.trustQ != nil && m.trustQ.armed && m.editor.Value() == "" {
		if c := m.trustKey(s); c != nil || m.trustQ == nil {
			return c
		}
	}
	if m.atKey(s) {
		return nil
	}
	switch s {
	case "ctrl+d":
		return m.quit()
	case "ctrl+l":
		// Repaint: the terminal's screen is cleared and the live part
		// drawn again (a screen another program or a resize garbled).
		return tea.ClearScreen
	case "ctrl+o":
		// The full transcript: reasoning text, whole results (those
		// folded so far are printed now), until Ctrl-O again.
		m.unfold = !m.unfold
		if m.unfold {
			m.expand()
			m.notice = "full transcript (Ctrl-O folds again)"
		} else {
			m.notice = ""
		}
		return nil
	case "esc":
		if m.running {
			m.cancelTurn()
		} else {
			m.stopShell()
		}
		return nil
	case "ctrl+c":
		switch {
		case m.running:
			m.cancelTurn()
		case m.editor.Value() != "":
			m.editor.Reset()
			m.history.Stop()
		case m.ctrlC:
			return m.quit()
		default:
			m.ctrlC = true
			m.notice = "press Ctrl-C again to exit (or Ctrl-D)"
		}
		return nil
	case "enter", "ctrl+j":
		return m.submit()
	case "tab":
		if strings.HasPrefix(m.editor.Value(), "/") {
			return m.completeSlash()
		}
		if _, ok := m.atWord(); ok {
			return m.completeAt()
		}
	case "shift+tab":
		m.cycleMode()
		return nil
	case "up":
		if m.history.Up(&m.editor) {
			return nil
		}
	case "down":
		if m.history.Down(&m.editor) {
			return nil
		}
	}
	before := m.editor.Value()
	var cmd tea.Cmd
	m.editor, cmd = m.editor.Update(k)
	return tea.Batch(cmd, m.afterEdit(before))
}

// submit sends the editor's text: a slash command, a prompt, or (while a
// turn runs) a queued prompt.
func (m *Model) submit() tea.Cmd {
	text := strings.TrimSpace(m.editor.Value())
	if text == "" {
		return nil
	}
	m.editor.Reset()
	return m.send(text)
}

// send sends text as submit does the editor's.
func (m *Model) send(text string) tea.Cmd {
	m.notice = ""
	m.history.Add(text, maxHistory)
	if strings.HasPrefix(text, "/") {
		return m.slash(text)
	}
	if strings.HasPrefix(text, "!") {
		return m.shellStart(text[1:])
	}
	if m.running || m.trustQ != nil {
		if len(m.queue) >= maxQueued {
			m.notice = fmt.Sprintf("the queue is full (%d prompts); wait for the turn to end", maxQueued)
			m.editor.SetValue(text)
			return nil
		}
		m.queue = append(m.queue, text)
		m.notice = fmt.Sprintf("queued (%d waiting)", len(m.queue))
		if m.trustQ != nil {
			m.notice += "; sent once the folder question is answered"
			if m.trustQ.deferred {
				// The prompt typed while reins started is in: the
				// question comes to the front now.
				return m.armTrust(m.trustQ)
			}
		}
		return nil
	}
	return m.startTurn(text)
}

// startTurn runs a turn for prompt on a goroutine of its own; its events
// and then its end come through the feed, in order.
func (m *Model) startTurn(prompt string) tea.Cmd {
	sess := m.sess
	m.sentAny = true
	full, notes := m.withContext(prompt) // !command outputs, @path files
	begin := m.beginUndo(sess, prompt)
	cmd := m.runTurn(prompt, func(ctx context.Context) (agent.TurnResult, *bool) {
		defer begin(ctx)() // the undo snapshot starts now, and is waited for at the end
		return sess.Run(ctx, full), nil
	})
	for _, n := range notes {
		m.say("  " + n)
	}
	return cmd
}

// runTurn runs a turn (a prompt's, or /compact's) on a goroutine of its
// own, shown as typed; its events and then its end come through the feed,
// in order. compacted is set by a /compact turn only.
func (m *Model) runTurn(shown string, run func(context.Context) (res agent.TurnResult, compacted *bool)) tea.Cmd {
	m.commit(m.st.user.Render("› " + termsafe.Escape(shown)))
	ctx, cancel := context.WithCancelCause(context.Background())
	m.running, m.cancel, m.turnStart = true, cancel, m.now()
	m.turnSeq++
	seq, f := m.turnSeq, m.feed
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer cancel(nil)
		res, compacted := run(ctx)
		f.Push(item{done: &turnDone{seq: seq, res: res, compacted: compacted}})
	}()
	return m.startTick()
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
	if f := m.afterTurn; f != nil {
		m.afterTurn = nil
		f()
	}
	// The log's figures, not the result's: a session's result counts every
	// child its manager settled, those of earlier turns again.
	m.usage = m.tally.Usage()
	m.turnUsage = llm.Usage{}
	rest := m.approvals[:0]
	for _, a := range m.approvals { // a cancelled turn's asks are moot
		if isDomain(a) { // the proxy's, not the turn's (approve_domain.go)
			rest = append(rest, a)
			continue
		}
		a.reply <- false
	}
	m.approvals = rest
	m.flushTree()
	m.live = liveStep{}
	m.notice = ""
	if c := msg.compacted; c != nil {
		switch {
		case *c:
			m.say("/compact: the older history is summarized; the next turn sends the summary")
		case msg.res.Failure != nil:
			m.say("/compact: the summary request failed: " + termsafe.EscapeLine(string(msg.res.Failure.Code)))
		case msg.res.Reason == session.ReasonCompleted:
			m.say("/compact: nothing to compact yet")
		default:
			m.say("/compact: " + termsafe.EscapeLine(string(msg.res.Reason)))
		}
	}
	if m.quitting {
		return nil
	}
	// A domain question left open comes to the front if a tool's was.
	if len(m.queue) > 0 {
		next := m.queue[0]
		m.queue = m.queue[1:]
		return tea.Batch(m.front(), m.startTurn(next))
	}
	return m.front()
}

// flushTree moves a settled tree to the scrollback (its jobs stay
// listed for /jobs) and starts an empty one.
func (m *Model) flushTree() {
	if m.tree.Empty() {
		return
	}
	m.commit(strings.Join(m.tree.Render(m.root, m.now(), m.width, m.st.tree()), "\n"))
	m.pastJobs = append(m.pastJobs, m.tree.Jobs()...)
	if len(m.pastJobs) > maxPastJobs {
		m.pastJobs = m.pastJobs[len(m.pastJobs)-maxPastJobs:]
	}
	m.tree = childtree.New()
}

// answer replies to the first pending approval.
func (m *Model) answer(ok, always bool) {
	a := m.approvals[0]
	m.approvals = m.approvals[1:]
	if a.rejecting { // the editor held the instruction: give the draft back
		m.editor.SetValue(a.draft)
	}
	if isGit(a) {
		m.commit(m.gitVerdict(a, ok))
		a.reply <- ok
		return
	}
	if isDomain(a) {
		m.commit(m.domainVerdict(a, ok))
		a.reply <- ok
		m.noteHost(a.preview.host, ok) // the network state changed
		return
	}
	verdict := "allowed"
	switch {
	case always:
		verdict = m.allowAlways(a)
	case !ok && a.note != "":
		verdict = "rejected, with your instruction: " + termsafe.EscapeLine(termtext.Cut(a.note, 200))
	case !ok:
		verdict = "rejected"
	}
	m.commit(m.st.dim.Render(fmt.Sprintf("  %s %s: %s%s", termsafe.EscapeLine(a.name), termsafe.EscapeLine(callSummary(a.name, string(a.args))), verdict, childOf(a))))
	a.reply <- ok
	// Later asks for a tool now always allowed need no question.
	rest := m.approvals[:0]
	for _, b := range m.approvals {
		if !isDomain(b) && !isGit(b) && m.ruleAllows(b) {
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
