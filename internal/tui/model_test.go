package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"go.uber.org/goleak"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/internal/tui/sessionlist"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// screen is a model under test: its harness runs on the scripted mock
// model, every committed block is kept, and the clock is fixed.
type screen struct {
	t         testing.TB
	m         *Model
	committed []string
	clock     time.Time
	cwd       string
}

// newScreen opens a model on a real harness whose mock provider serves
// script (YAML; "" is the echo script).
func newScreen(t testing.TB, script string, mod func(*Options)) *screen {
	t.Helper()
	return newScreenHome(t, t.TempDir(), script, mod)
}

// newScreenHome is newScreen with REINS_HOME home (its commands/,
// skills/ and config.yaml are the user's).
func newScreenHome(t testing.TB, home, script string, mod func(*Options)) *screen {
	t.Helper()
	cwd := t.TempDir()
	env := map[string]string{}
	if script != "" {
		p := filepath.Join(t.TempDir(), "script.yaml")
		if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		env["REINS_MOCK_SCRIPT"] = p
	}
	h, err := harness.New(harness.Options{Home: home, Cwd: cwd, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	model, err := h.ResolveModel("mock/echo", "")
	if err != nil {
		t.Fatal(err)
	}
	s := &screen{t: t, clock: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), cwd: cwd}
	opts := Options{Harness: h, Session: harness.SessionOptions{Model: model, Permission: tool.WorkspaceWrite},
		Ask: true, NoColor: true, Now: func() time.Time { return s.clock }}
	if mod != nil {
		mod(&opts)
	}
	s.m, err = New(opts, func(c string) { s.committed = append(s.committed, c) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.m.Close(); err != nil {
			t.Error(err)
		}
	})
	s.send(tea.WindowSizeMsg{Width: 80, Height: 30})
	return s
}

func (s *screen) send(msg tea.Msg) tea.Cmd {
	_, cmd := s.m.Update(msg)
	return cmd
}

// run runs cmd and what it batches, sending the screen's own messages
// back (the walk @'s list starts); others (ticks, quits) are dropped.
func (s *screen) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			s.run(c)
		}
	case completeMsg:
		s.run(s.send(msg))
	}
}

func (s *screen) view() string { return ansi.Strip(s.m.View().Content) }

// log is everything committed so far, escape sequences removed.
func (s *screen) log() string { return ansi.Strip(strings.Join(s.committed, "\n")) }

// typeText types text and presses Enter.
func (s *screen) typeText(text string) {
	for _, r := range text {
		s.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	s.send(tea.KeyPressMsg{Code: tea.KeyEnter})
}

// pump feeds the session's items to the model until cond holds (or a
// generous deadline passes): the model-level stand-in for the program's
// event loop.
func (s *screen) pump(cond func() bool) {
	s.t.Helper()
	deadline := time.After(30 * time.Second)
	for !cond() {
		select {
		case <-s.m.feed.Wake():
			s.send(feedMsg{s.m.feed.Take()})
		case <-deadline:
			s.t.Fatalf("condition not met; view:\n%s\ncommitted:\n%s", s.view(), s.log())
		}
	}
}

// ev is an event of session id at the screen's clock.
func (s *screen) ev(id, typ string, data any) item {
	b, err := json.Marshal(data)
	if err != nil {
		s.t.Fatal(err)
	}
	e, err := session.NewEvent(typ, 0, s.clock, b)
	if err != nil {
		panic(err)
	}
	return item{header: session.Header{ID: id}, event: e}
}

func (s *screen) feedItems(its ...item) { s.send(feedMsg{its}) }

// armHead delivers what the program would after drawing the head
// question: the message that arms it.
func (s *screen) armHead() {
	if len(s.m.approvals) == 0 {
		return // answered without a question (allowed for the session)
	}
	s.view()
	s.send(armMsg{s.m.approvals[0]})
}

func chunk(text string) session.AssistantChunk {
	return session.AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Delta: text}}
}

// TestStreaming: text deltas show as they arrive, control characters
// escaped; the finished step moves to the scrollback as Markdown; a retry
// drops the failed attempt's text and says so.
func TestStreaming(t *testing.T) {
	s := newScreen(t, "", nil)
	root := s.m.root
	s.feedItems(s.ev(root, session.TypeAssistantChunk, chunk("Hello \x1b]0;pwned\x07wor")))
	if v := s.m.View().Content; strings.Contains(v, "\x1b]0;") || !strings.Contains(v, `Hello \x1b]0;pwned\x07wor`) {
		t.Fatalf("live text not escaped: %q", v)
	}
	s.feedItems(s.ev(root, session.TypeLLMRetry, session.LLMRetry{Retry: 1, MaxRetries: 5, DelayMs: 250, Failure: session.Failure{Code: "EMPTY_RESPONSE"}}))
	if strings.Contains(s.view(), "Hello") {
		t.Errorf("a retried attempt's text is still shown:\n%s", s.view())
	}
	if !strings.Contains(s.log(), "EMPTY_RESPONSE, retry 1/5 in 250 ms") {
		t.Errorf("the retry is not shown:\n%s", s.log())
	}
	s.feedItems(
		s.ev(root, session.TypeAssistantChunk, session.AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkReasoningDelta, Delta: "thinking hard"}}),
		s.ev(root, session.TypeAssistantChunk, chunk("# Title\n\nsome *text*")),
	)
	if v := s.view(); !strings.Contains(v, "reasoning… (13 bytes, folded") || !strings.Contains(v, "some *text*") || strings.Contains(v, "thinking hard") {
		t.Errorf("live view:\n%s", v)
	}
	s.feedItems(s.ev(root, session.TypeAssistantMessage, session.AssistantMessage{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		{Type: llm.BlockReasoning, Text: "thinking hard"}, {Type: llm.BlockText, Text: "# Title\n\nsome *text*"},
	}}, Usage: &llm.Usage{InputTokens: 1200, OutputTokens: 34}}))
	if v := s.view(); strings.Contains(v, "some") || !strings.Contains(v, "1.2k tok unpriced") {
		t.Errorf("after the step, live view:\n%s", v)
	}
	log := s.log()
	if !strings.Contains(log, "reasoning (13 bytes, folded") || strings.Contains(log, "thinking hard") || !strings.Contains(log, "Title") {
		t.Errorf("committed:\n%s", log)
	}
}

// TestAnswerEscapedAndUnfolded: a finished answer's control sequences
// reach the scrollback escaped (Markdown rendering adds only its own
// styling), and Ctrl-O shows reasoning text, escaped, instead of its size.
func TestAnswerEscapedAndUnfolded(t *testing.T) {
	for _, noColor := range []bool{true, false} {
		s := newScreen(t, "", func(o *Options) { o.NoColor = noColor })
		root := s.m.root
		s.send(tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl})
		s.feedItems(s.ev(root, session.TypeAssistantChunk, session.AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkReasoningDelta, Delta: "plan \x1b[2J"}}))
		if v := s.m.View().Content; !strings.Contains(v, `plan \x1b[2J`) || strings.Contains(v, "\x1b[2J") {
			t.Errorf("unfolded live reasoning: %q", v)
		}
		s.feedItems(s.ev(root, session.TypeAssistantMessage, session.AssistantMessage{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
			{Type: llm.BlockReasoning, Text: "plan \x1b[2J"},
			{Type: llm.BlockText, Text: "**done** \x1b]52;c;aGk=\x07 and \u202e reversed"},
		}}}))
		all := strings.Join(s.committed, "\n")
		for _, bad := range []string{"\x1b]52", "\x1b[2J", "\u202e"} {
			if strings.Contains(all, bad) {
				t.Errorf("noColor=%v: %q reached the scrollback raw", noColor, bad)
			}
		}
		log := s.log()
		for _, want := range []string{`\x1b]52;c;aGk=\x07`, `\u202e`, "▾ reasoning", `plan \x1b[2J`} {
			if !strings.Contains(log, want) {
				t.Errorf("noColor=%v: scrollback lacks %q:\n%s", noColor, want, log)
			}
		}
	}
}

// TestLiveMarkdown: finished paragraphs of a streaming answer show as
// Markdown while the one being written shows as it comes.
func TestLiveMarkdown(t *testing.T) {
	s := newScreen(t, "", func(o *Options) { o.NoColor = false })
	root := s.m.root
	s.feedItems(s.ev(root, session.TypeAssistantChunk, chunk("A **bold** start")))
	if v := s.view(); !strings.Contains(v, "A **bold** start") {
		t.Errorf("the paragraph being written: %s", v)
	}
	s.feedItems(s.ev(root, session.TypeAssistantChunk, chunk("\n\nand *more")))
	v := s.view()
	if strings.Contains(v, "**bold**") || !strings.Contains(v, "A bold start") || !strings.Contains(v, "and *more") {
		t.Errorf("after the paragraph ended: %s", v)
	}
}

// TestToolCalls: a call in flight shows with its summary; its result
// moves to the scrollback with status, result summary and, for an edit,
// the diff; a failed call has no diff.
func TestToolCalls(t *testing.T) {
	s := newScreen(t, "", nil)
	root := s.m.root
	s.feedItems(
		s.ev(root, session.TypeToolCall, session.ToolCall{CallID: "c1", Name: "edit", Arguments: `{"path":"a.go","old_string":"x := 1\n","new_string":"x := 2\ny := 3\n"}`}),
		s.ev(root, session.TypeToolCall, session.ToolCall{CallID: "c2", Name: "bash", Arguments: `{"command":"false"}`}),
	)
	if v := s.view(); !strings.Contains(v, "⋯ edit path=a.go") || !strings.Contains(v, "⋯ bash command=false") {
		t.Fatalf("calls in flight:\n%s", v)
	}
	s.feedItems(
		s.ev(root, session.TypeToolResult, session.ToolResult{CallID: "c1", Content: "edited a.go"}),
		s.ev(root, session.TypeToolResult, session.ToolResult{CallID: "c2", Content: "exit status 1\n\x1b[2Jboom", IsError: true}),
	)
	if v := s.view(); strings.Contains(v, "⋯") {
		t.Errorf("settled calls still in flight:\n%s", v)
	}
	log := s.log()
	for _, want := range []string{"✓ edit path=a.go", "→ edited a.go", "- x := 1", "+ x := 2", "+ y := 3", "✗ bash command=false", "→ exit status 1 (2 lines)"} {
		if !strings.Contains(log, want) {
			t.Errorf("committed lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(strings.Join(s.committed, ""), "\x1b[2J") {
		t.Error("a tool's control sequence reached the terminal")
	}
}

// TestApprovals: a tool call asks; y allows once, n and Esc reject, a
// allows the tool for the rest of the session (pending asks for it too).
func TestApprovals(t *testing.T) {
	s := newScreen(t, "", nil)
	ask := func(name string) *approval {
		a := &approval{name: name, args: json.RawMessage(`{"path":"f.txt"}`), reply: make(chan bool, 1)}
		s.feedItems(item{approve: a})
		s.armHead()
		return a
	}
	got := func(a *approval) bool {
		select {
		case ok := <-a.reply:
			return ok
		default:
			t.Fatalf("%s has no answer", a.name)
			return false
		}
	}
	a := ask("write")
	v := s.view()
	if !strings.Contains(v, "? allow write f.txt") || !strings.Contains(v, "[y] once  [a] always allow write(f.txt)  [n] reject…  [Esc] reject") {
		t.Fatalf("no question:\n%s", v)
	}
	if s.m.View().WindowTitle != "reins · approve write?" {
		t.Errorf("window title %q", s.m.View().WindowTitle)
	}
	s.send(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if !got(a) {
		t.Error("y did not allow")
	}
	a = ask("write")
	s.send(tea.KeyPressMsg{Code: 'n', Text: "n"})
	s.send(tea.KeyPressMsg{Code: tea.KeyEnter}) // no instruction
	if got(a) {
		t.Error("n allowed")
	}
	a = ask("bash")
	s.send(tea.KeyPressMsg{Code: tea.KeyEscape})
	if got(a) {
		t.Error("Esc allowed")
	}
	// Two asks pending; "a" on the first allows both.
	a, b, c := ask("edit"), ask("edit"), ask("bash")
	s.send(tea.KeyPressMsg{Code: 'a', Text: "a"})
	if !got(a) || !got(b) {
		t.Error("a did not allow the pending edit")
	}
	if v := s.view(); !strings.Contains(v, "? allow bash") {
		t.Errorf("the bash ask is not next:\n%s", v)
	}
	s.armHead()
	s.send(tea.KeyPressMsg{Code: 'n', Text: "n"})
	s.send(tea.KeyPressMsg{Code: tea.KeyEnter}) // no instruction
	if got(c) {
		t.Error("bash allowed")
	}
	if d := ask("edit"); !got(d) {
		t.Error("a later edit asked again")
	}
	log := s.log()
	for _, want := range []string{"write path=f.txt: allowed", "write path=f.txt: rejected", "edit path=f.txt: allowed; rule edit(f.txt) added for this session"} {
		if !strings.Contains(log, want) {
			t.Errorf("committed lacks %q:\n%s", want, log)
		}
	}
}

// TestApprovalRealSession: a real turn on the mock model whose write is
// asked about; the answer decides whether the file is written.
func TestApprovalRealSession(t *testing.T) {
	s := newScreen(t, `
replies:
  - match: WRITE
    repeat: true
    toolCalls:
      - {id: w1, name: write, arguments: {path: out.txt, content: "hi\n"}}
  - match: "to out.txt"
    text: "written"
  - match: "not approved"
    text: "refused"
`, nil)
	for _, tc := range []struct {
		key  string
		want string
		file bool
	}{{"n", "refused", false}, {"y", "written", true}} {
		s.committed = nil
		s.typeText("WRITE it")
		s.pump(func() bool { return len(s.m.approvals) > 0 })
		s.armHead()
		s.send(tea.KeyPressMsg{Code: rune(tc.key[0]), Text: tc.key})
		if tc.key == "n" {
			s.send(tea.KeyPressMsg{Code: tea.KeyEnter}) // no instruction
		}
		s.pump(func() bool { return !s.m.running })
		if !strings.Contains(s.log(), tc.want) {
			t.Errorf("key %s: committed:\n%s", tc.key, s.log())
		}
		if _, err := os.Stat(filepath.Join(s.cwd, "out.txt")); (err == nil) != tc.file {
			t.Errorf("key %s: out.txt exists %v", tc.key, err == nil)
		}
	}
	// Ctrl-C on a question rejects it and cancels the turn.
	os.Remove(filepath.Join(s.cwd, "out.txt"))
	s.committed = nil
	s.typeText("WRITE again")
	s.pump(func() bool { return len(s.m.approvals) > 0 })
	s.send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	s.pump(func() bool { return !s.m.running })
	if log := s.log(); !strings.Contains(log, "rejected") || !strings.Contains(log, "turn ended: aborted by user") {
		t.Errorf("Ctrl-C on a question:\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(s.cwd, "out.txt")); err == nil {
		t.Error("the write ran after Ctrl-C")
	}
}

// TestChildTree: children appear when they start, count their own
// tokens while they run, show stop reason and diagnostic on settlement,
// nest under their parent, and the settled tree goes to the scrollback
// when the turn ends.
func TestChildTree(t *testing.T) {
	s := newScreen(t, "", nil)
	root := s.m.root
	s.m.running, s.m.turnStart = true, s.clock // as if a turn ran
	s.feedItems(
		s.ev(root, session.TypeSubagentStart, session.SubagentStart{RunID: "r1", ChildSession: "c1", Agent: "general", Provider: "inprocess", Label: "look \x1b[5mhere"}),
		s.ev(root, session.TypeSubagentStart, session.SubagentStart{RunID: "r2", ChildSession: "c2", Agent: "pi", Provider: "pi", Label: "bg work", Background: true}),
	)
	s.clock = s.clock.Add(2500 * time.Millisecond)
	s.feedItems(
		s.ev("c1", session.TypeAssistantMessage, session.AssistantMessage{Usage: &llm.Usage{InputTokens: 900, OutputTokens: 100}}),
		s.ev("c1", session.TypeSubagentStart, session.SubagentStart{RunID: "r3", ChildSession: "g1", Agent: "scout", Provider: "inprocess", Label: "grandchild"}),
	)
	v := s.view()
	for _, want := range []string{
		`◌ general (inprocess) look \x1b[5mhere  running  2.5s  1.0k tok unpriced`,
		"◌ pi (pi) [job] bg work  running  2.5s",
		"  ◌ scout (inprocess) grandchild  running  0.0s",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("tree lacks %q:\n%s", want, v)
		}
	}
	if !strings.Contains(v, "mock/echo · "+sessionlist.ShortID(root)+" · 1.0k tok unpriced") {
		t.Errorf("status lacks the children's tokens:\n%s", v)
	}
	cost := 0.0123
	s.clock = s.clock.Add(time.Second)
	s.feedItems(
		s.ev("c1", session.TypeSubagentEnd, session.SubagentEnd{RunID: "r3", StopReason: "completed"}),
		s.ev(root, session.TypeSubagentEnd, session.SubagentEnd{RunID: "r1", StopReason: "completed", Usage: &llm.Usage{InputTokens: 2000, OutputTokens: 200, CostUSD: &cost}}),
		s.ev(root, session.TypeSubagentEnd, session.SubagentEnd{RunID: "r2", StopReason: "error", Diagnostic: "provider=pi stage=run category=crash"}),
		s.ev(root, session.TypeJobNotice, session.JobNotice{JobID: "job-1", Status: "failed"}),
	)
	v = s.view()
	for _, want := range []string{
		"● general (inprocess) look",
		"completed  3.5s  2.2k tok $0.0123",
		"● pi (pi) [job job-1] bg work  error  3.5s",
		"provider=pi stage=run category=crash",
		"● scout (inprocess) grandchild  completed  1.0s",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("settled tree lacks %q:\n%s", want, v)
		}
	}
	s.send(tea.KeyPressMsg{Code: '/', Text: "/"})
	s.typeText("jobs")
	if !strings.Contains(s.log(), "[job job-1] bg work  error") {
		t.Errorf("/jobs:\n%s", s.log())
	}
	s.m.turnSeq = 7
	s.feedItems(item{done: &turnDone{seq: 7}})
	if s.m.running || strings.Contains(s.view(), "children") {
		t.Errorf("after the turn the live tree stays:\n%s", s.view())
	}
	if !strings.Contains(s.log(), "error  3.5s") || !strings.Contains(s.log(), "category=crash") {
		t.Errorf("the settled tree is not in the scrollback:\n%s", s.log())
	}
}

// TestSlashCommands runs each command against a real session.
func TestSlashCommands(t *testing.T) {
	s := newScreen(t, "", nil)
	first := s.m.root
	run := func(line string) string {
		s.committed = nil
		s.typeText(line)
		return s.log()
	}
	help := run("/help")
	for _, c := range commands {
		if !strings.Contains(help, "/"+c.Name) {
			t.Errorf("/help lacks /%s", c.Name)
		}
	}
	if out := run("/agents"); !strings.Contains(out, "general (inprocess)") {
		t.Errorf("/agents: %s", out)
	}
	if out := run("/jobs"); !strings.Contains(out, "no background jobs") {
		t.Errorf("/jobs: %s", out)
	}
	if out := run("/cost"); !strings.Contains(out, "cost unknown") {
		t.Errorf("/cost: %s", out)
	}
	if out := run("/log"); !strings.Contains(out, filepath.Join(first, session.FileName)) || !strings.Contains(out, "reins log "+first) {
		t.Errorf("/log: %s", out)
	}
	run("/compact") // a turn of its own: nothing to summarize yet
	s.pump(func() bool { return !s.m.running })
	if out := s.log(); !strings.Contains(out, "/compact: nothing to compact yet") {
		t.Errorf("/compact on a new session: %s", out)
	}
	if out := run("/model mock/other"); !strings.Contains(out, "model: mock/other") || s.m.sess.Agent.ModelName != "other" {
		t.Errorf("/model: %s", out)
	}
	if out := run("/model nope/x"); !strings.Contains(out, "/model:") || s.m.sess.Agent.ModelName != "other" {
		t.Errorf("/model with a bad name: %s", out)
	}
	if out := run("/bogus \x1b[2J"); !strings.Contains(out, "unknown command /bogus") {
		t.Errorf("unknown: %s", out)
	}
	// A turn, so the first session has something to resume.
	s.typeText("remember me")
	s.pump(func() bool { return !s.m.running })
	for _, p := range []string{"second", "third"} {
		s.typeText(p)
		s.pump(func() bool { return !s.m.running })
	}
	// With three turns there is an older part to summarize: the model's
	// answer becomes the summary, recorded in the log.
	run("/compact")
	s.pump(func() bool { return !s.m.running })
	if out := s.log(); !strings.Contains(out, "/compact: the older history is summarized") {
		t.Errorf("/compact after three turns: %s", out)
	}
	if raw, err := os.ReadFile(s.m.sess.Log.Path()); err != nil || !strings.Contains(string(raw), `"`+session.TypeContextCompacted+`"`) {
		t.Errorf("the log has no %s event (%v)", session.TypeContextCompacted, err)
	}
	used := s.m.usage
	run("/new")
	if s.m.root == first || !strings.Contains(s.log(), "new session") {
		t.Fatalf("/new: root %s, %s", s.m.root, s.log())
	}
	if !s.m.usage.IsZero() {
		t.Errorf("a new session starts with usage %+v", s.m.usage)
	}
	out := run("/resume " + first[:len(first)-2])
	if s.m.root != first || !strings.Contains(out, "resumed session") || !strings.Contains(out, "mock: remember me") {
		t.Errorf("/resume: root %s\n%s", s.m.root, out)
	}
	if s.m.usage.InputTokens != used.InputTokens || used.InputTokens == 0 {
		t.Errorf("resumed usage %+v, the session used %+v", s.m.usage, used)
	}
	if out := run("/resume nosuch"); !strings.Contains(out, "/resume:") {
		t.Errorf("/resume nosuch: %s", out)
	}
	// Commands that change the session wait for the turn.
	s.m.running = true
	if out := run("/new"); !strings.Contains(out, "a turn is running") || s.m.root != first {
		t.Errorf("/new while running: %s", out)
	}
	s.m.running = false
	if cmd := s.send(tea.KeyPressMsg{Code: tea.KeyEnter}); cmd != nil {
		t.Error("Enter on an empty prompt did something")
	}
	s.send(tea.KeyPressMsg{Code: '/', Text: "/"})
	for _, r := range "quit" {
		s.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	if !isQuit(s.send(tea.KeyPressMsg{Code: tea.KeyEnter})) {
		t.Error("/quit did not quit")
	}
}

func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

// TestKeys: Alt-Enter adds a line, Up/Down recall history, a prompt sent
// while a turn runs is queued and runs next, Esc cancels the turn (the
// log records aborted by user), Ctrl-C clears then exits on the second
// press, Ctrl-D exits.
func TestKeys(t *testing.T) {
	s := newScreen(t, `
replies:
  - match: queued two
    text: "echo: queued two"
  - match: SLOW
    text: "slow slow slow slow slow slow slow slow"
    chunk: 4
    chunkDelay: 1s
fallback:
  echo: true
  text: "echo: "
`, nil)
	s.send(tea.KeyPressMsg{Code: 'a', Text: "a"})
	s.send(tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt})
	s.send(tea.KeyPressMsg{Code: 'b', Text: "b"})
	if got := s.m.editor.Value(); got != "a\nb" {
		t.Fatalf("editor %q", got)
	}
	s.send(tea.PasteMsg{Content: "\npasted line\nand another"})
	if got := s.m.editor.Value(); got != "a\nb\npasted line\nand another" || s.m.running {
		t.Fatalf("after a paste: editor %q, running %v", got, s.m.running)
	}
	s.send(tea.KeyPressMsg{Code: tea.KeyEnter})
	s.pump(func() bool { return !s.m.running })
	if !strings.Contains(s.log(), "echo: a\n  b\n  pasted line") { // the answer keeps its lines
		t.Errorf("multi-line prompt answer:\n%s", s.log())
	}

	s.typeText("SLOW one")
	s.typeText("queued two")
	if len(s.m.queue) != 1 || !strings.Contains(s.view(), "queued (1 waiting)") {
		t.Fatalf("queue %v\n%s", s.m.queue, s.view())
	}
	s.send(tea.KeyPressMsg{Code: tea.KeyEscape})
	s.pump(func() bool { return strings.Contains(s.log(), "echo: queued two") })
	s.pump(func() bool { return !s.m.running })
	if !strings.Contains(s.log(), "turn ended: aborted by user") {
		t.Errorf("Esc:\n%s", s.log())
	}
	ld, err := session.Load(s.m.sess.Log.Path())
	if err != nil {
		t.Fatal(err)
	}
	var aborted bool
	for _, e := range ld.Events {
		var d session.TurnEnd
		if e.Type == session.TypeTurnEnd && e.Decode(&d) == nil && d.Reason == session.ReasonAborted && d.By == session.AbortedByUser {
			aborted = true
		}
	}
	if !aborted {
		t.Error("the log has no turn aborted by the user")
	}

	// History: Up recalls the last prompts, Down returns to the draft.
	s.send(tea.KeyPressMsg{Code: 'd', Text: "d"})
	s.send(tea.KeyPressMsg{Code: tea.KeyUp})
	if got := s.m.editor.Value(); got != "queued two" {
		t.Errorf("Up: %q", got)
	}
	s.send(tea.KeyPressMsg{Code: tea.KeyUp})
	if got := s.m.editor.Value(); got != "SLOW one" {
		t.Errorf("Up twice: %q", got)
	}
	s.send(tea.KeyPressMsg{Code: tea.KeyDown})
	s.send(tea.KeyPressMsg{Code: tea.KeyDown})
	if got := s.m.editor.Value(); got != "d" {
		t.Errorf("Down back to the draft: %q", got)
	}

	ctrlC := tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	if isQuit(s.send(ctrlC)) || s.m.editor.Value() != "" {
		t.Errorf("Ctrl-C with text: %q", s.m.editor.Value())
	}
	if isQuit(s.send(ctrlC)) || !strings.Contains(s.view(), "Ctrl-C again") {
		t.Errorf("first Ctrl-C on an empty prompt:\n%s", s.view())
	}
	s.send(tea.KeyPressMsg{Code: 'x', Text: "x"}) // disarms
	s.send(ctrlC)                                 // clears x
	if isQuit(s.send(ctrlC)) {
		t.Error("Ctrl-C after another key exited at once")
	}
	if !isQuit(s.send(ctrlC)) {
		t.Error("Ctrl-C twice did not exit")
	}
	if !isQuit(s.send(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl})) {
		t.Error("Ctrl-D did not exit")
	}
}

// TestManyFit: hundreds of children and calls in flight, and a huge
// paste, leave a screen no taller than the terminal and a bounded prompt.
func TestManyFit(t *testing.T) {
	s := newScreen(t, "", nil)
	s.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	root := s.m.root
	var its []item
	for i := range 300 {
		its = append(its, s.ev(root, session.TypeSubagentStart, session.SubagentStart{RunID: fmt.Sprint("r", i), ChildSession: fmt.Sprint("c", i), Agent: "general", Provider: "inprocess"}))
		its = append(its, s.ev(root, session.TypeToolCall, session.ToolCall{CallID: fmt.Sprint("k", i), Name: "subagent", Arguments: `{}`}))
	}
	its = append(its, s.ev(root, session.TypeAssistantChunk, chunk(strings.Repeat("line\n", 100))))
	s.feedItems(its...)
	v := s.view()
	if n := strings.Count(v, "\n") + 1; n > 24 {
		t.Errorf("%d lines on a 24-line terminal:\n%s", n, v)
	}
	for _, want := range []string{"more calls", "more lines of children"} {
		if !strings.Contains(v, want) {
			t.Errorf("no %q:\n%s", want, v)
		}
	}
	s.send(tea.PasteMsg{Content: strings.Repeat("x", 3*maxPrompt)})
	if n := len(s.m.editor.Value()); n > maxPrompt {
		t.Errorf("the prompt holds %d characters", n)
	}
}

var sgrColor = regexp.MustCompile(`\x1b\[[0-9;]*(3[0-9]|9[0-7]|38;)`)

// TestNarrowAndNoColor: at 60 columns no line of the screen is wider;
// with NO_COLOR no colour sequence is drawn.
func TestNarrowAndNoColor(t *testing.T) {
	s := newScreen(t, "", nil)
	s.send(tea.WindowSizeMsg{Width: 60, Height: 20})
	root := s.m.root
	long := strings.Repeat("word ", 40)
	s.feedItems(
		s.ev(root, session.TypeAssistantChunk, chunk(long)),
		s.ev(root, session.TypeToolCall, session.ToolCall{CallID: "c", Name: "bash", Arguments: `{"command":"` + strings.Repeat("x", 200) + `"}`}),
		s.ev(root, session.TypeSubagentStart, session.SubagentStart{RunID: "r", ChildSession: "c", Agent: strings.Repeat("a", 80), Provider: "inprocess", Label: long}),
		item{approve: &approval{name: "bash", args: json.RawMessage(`{"command":"` + strings.Repeat("y", 200) + `"}`), reply: make(chan bool, 1)}},
	)
	v := s.m.View().Content
	for _, l := range strings.Split(v, "\n") {
		if w := ansi.StringWidth(l); w > 60 {
			t.Errorf("line of %d cells at 60 columns: %q", w, ansi.Strip(l))
		}
	}
	if sgrColor.MatchString(v) {
		t.Errorf("colour with NO_COLOR: %q", v)
	}
	s.feedItems(s.ev(root, session.TypeToolResult, session.ToolResult{CallID: "c", Content: strings.Repeat("z", 300)}))
	for _, c := range s.committed {
		if sgrColor.MatchString(c) {
			t.Errorf("colour with NO_COLOR in the scrollback: %q", c)
		}
	}

	c := newScreen(t, "", func(o *Options) { o.NoColor = false })
	c.feedItems(c.ev(c.m.root, session.TypeSubagentStart, session.SubagentStart{RunID: "r", ChildSession: "c", Agent: "general", Provider: "inprocess"}))
	if !sgrColor.MatchString(c.m.View().Content) {
		t.Error("no colour without NO_COLOR")
	}
}

// TestResumeReplayBounded: a resumed session shows its latest messages
// and says how many earlier ones `reins log` has.
func TestResumeReplayBounded(t *testing.T) {
	s := newScreen(t, "", nil)
	first := s.m.root
	for i := range 25 {
		s.m.sess.Run(t.Context(), fmt.Sprintf("prompt %d", i))
	}
	s.feedItems(s.m.feed.Take()...)
	s.typeText("/new")
	s.committed = nil
	s.typeText("/resume " + first)
	log := s.log()
	if !strings.Contains(log, "… 10 earlier messages (reins log "+first+" shows them)") {
		t.Errorf("no count of earlier messages:\n%s", log)
	}
	if strings.Contains(log, "prompt 4\n") || !strings.Contains(log, "prompt 5") || !strings.Contains(log, "mock: prompt 24") {
		t.Errorf("not the latest 40 messages:\n%s", log)
	}
}

// TestApprovalShowsEverything (issue 26 item 6): an overwrite's question
// shows the diff against the file as it is, removed lines too; an edit's
// shows the file's lines around the change; a bash command is shown
// whole, wrapped and with its control characters visible, however long;
// keys that arrive before the question is armed never answer it.
func TestApprovalShowsEverything(t *testing.T) {
	s := newScreen(t, "", nil)
	if err := os.WriteFile(filepath.Join(s.cwd, "greet.md"), []byte("# Hello\nkeep me\nold line\nlast\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ask := func(name, args string) *approval {
		a := &approval{name: name, args: json.RawMessage(args), reply: make(chan bool, 1)}
		a.preview = makePreview(s.cwd, name, a.args)
		s.feedItems(item{approve: a})
		return a
	}
	a := ask("write", `{"path":"greet.md","content":"# Hello\nkeep me\nnew line\nlast\n"}`)
	// Typed before the question was armed: dropped, not an answer.
	s.view()
	s.send(tea.KeyPressMsg{Code: 'y', Text: "y"})
	select {
	case <-a.reply:
		t.Fatal("a key typed before the question was armed answered it")
	default:
	}
	if v := s.view(); strings.Contains(v, "[y] once") {
		t.Errorf("answer keys shown before the question is armed:\n%s", v)
	}
	s.armHead()
	v := s.view()
	for _, want := range []string{"? allow write greet.md (overwrites 30 bytes with 30 bytes)", "      keep me", "    - old line", "    + new line", "      last", "[y] once"} {
		if !strings.Contains(v, want) {
			t.Errorf("write question lacks %q:\n%s", want, v)
		}
	}
	s.send(tea.KeyPressMsg{Code: 'n', Text: "n"})
	s.send(tea.KeyPressMsg{Code: tea.KeyEnter}) // no instruction
	if <-a.reply {
		t.Error("n allowed")
	}

	a = ask("edit", `{"path":"greet.md","old_string":"old line","new_string":"edited\nline"}`)
	s.armHead()
	v = s.view()
	for _, want := range []string{"? allow edit greet.md", "    - old line", "    + edited", "    + line", "      keep me"} {
		if !strings.Contains(v, want) {
			t.Errorf("edit question lacks %q:\n%s", want, v)
		}
	}
	s.send(tea.KeyPressMsg{Code: 'n', Text: "n"})
	s.send(tea.KeyPressMsg{Code: tea.KeyEnter}) // no instruction
	<-a.reply

	// The hidden tail of a long command, and a control character in it.
	cmd := "echo running: go test ./internal/... -run TestUnit -count=1 -v -timeout 10m -tags integration \x1b[8m; rm -rf .git"
	args, _ := json.Marshal(map[string]string{"command": cmd, "description": "run the tests"})
	a = ask("bash", string(args))
	s.armHead()
	v = s.view()
	flat := strings.Join(strings.Fields(v), " ")
	for _, want := range []string{`\x1b[8m;`, "rm -rf .git", "description: run the tests"} {
		if !strings.Contains(flat, want) {
			t.Errorf("bash question lacks %q:\n%s", want, v)
		}
	}
	for _, l := range strings.Split(v, "\n") {
		if ansi.StringWidth(l) > 80 {
			t.Errorf("line wider than the screen: %q", l)
		}
	}
	s.send(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if !<-a.reply {
		t.Error("y did not allow")
	}

	// Too tall for the screen: printed whole above, the live view says so.
	long := strings.Repeat("line\n", 100)
	a = ask("write", `{"path":"big.txt","content":`+strconv.Quote(long)+`}`)
	s.armHead()
	if v := s.view(); !strings.Contains(v, "more lines: the whole question is printed above") {
		t.Errorf("tall question:\n%s", v)
	}
	if n := strings.Count(s.log(), "    + line"); n != 100 {
		t.Errorf("the scrollback holds %d of the 100 added lines", n)
	}
	s.send(tea.KeyPressMsg{Code: 'n', Text: "n"})
	s.send(tea.KeyPressMsg{Code: tea.KeyEnter}) // no instruction
	<-a.reply
}

// TestSettledWriteShowsRemovedLines: an allowed overwrite's settled block
// in the scrollback shows the diff its question showed, the removed lines
// included, not only the new content.
func TestSettledWriteShowsRemovedLines(t *testing.T) {
	s := newScreen(t, `
replies:
  - match: WRITE
    toolCalls:
      - {id: w1, name: write, arguments: {path: out.txt, content: "same\nnew\n"}}
  - match: "to out.txt"
    text: "written"
`, nil)
	if err := os.WriteFile(filepath.Join(s.cwd, "out.txt"), []byte("same\nold\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.typeText("WRITE it")
	s.pump(func() bool { return len(s.m.approvals) > 0 })
	s.armHead()
	s.send(tea.KeyPressMsg{Code: 'y', Text: "y"})
	s.pump(func() bool { return !s.m.running })
	log := s.log()
	if !strings.Contains(log, "    - old\n    + new") || !strings.Contains(log, "      same") {
		t.Errorf("settled write block:\n%s", log)
	}
}

// TestModelPick (issue 48): /model alone opens a picker of the whole
// catalogue — typing filters it, Down moves, Enter chooses, Esc closes —
// with the models whose provider has a key (the mock's needs none, the
// running one's works) before those without, which say which variable
// they lack; /model TEXT switches on a single match and opens the picker
// filtered on several; /model PROVIDER/MODEL in full names any.
func TestModelPick(t *testing.T) {
	s := newScreen(t, "", nil)
	s.typeText("/model")
	if s.m.picker == nil {
		t.Fatalf("/model opened no picker; view:\n%s\nlog:\n%s", s.view(), s.log())
	}
	v := s.view()
	if !strings.Contains(v, "› mock/") || !strings.Contains(v, "↑↓ move · Enter chooses · Esc closes") || !strings.Contains(v, "more (type to filter)") {
		t.Fatalf("picker view:\n%s", v)
	}
	// Every model is offered: the keyless ones after, marked.
	rows := s.m.picker.shown()
	if len(rows) != len(s.m.modelChoices()) {
		t.Errorf("the picker offers %d of %d models", len(rows), len(s.m.modelChoices()))
	}
	seenKeyless := false
	for _, r := range rows {
		if strings.HasPrefix(r.id, "mock/") && seenKeyless {
			t.Errorf("%s (no key needed) after a model without a key", r.id)
		}
		if strings.HasPrefix(r.id, "anthropic/") {
			seenKeyless = true
			if !strings.Contains(r.row, "(no key: ANTHROPIC_API_KEY)") {
				t.Errorf("keyless row: %q", r.row)
			}
		}
	}
	if !seenKeyless {
		t.Error("no anthropic model offered")
	}
	// Type to filter, Down, Enter.
	for _, r := range "mock/" {
		s.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	if v := s.view(); !strings.Contains(v, "filter: mock/") || strings.Contains(v, "anthropic/") {
		t.Fatalf("filtered view:\n%s", v)
	}
	first := s.m.picker.shown()[0].id
	s.send(tea.KeyPressMsg{Code: tea.KeyDown})
	want := s.m.picker.shown()[1].id
	s.send(tea.KeyPressMsg{Code: tea.KeyEnter})
	if s.m.picker != nil || s.m.modelName() != want || want == first {
		t.Fatalf("Down Enter chose %s, want %s (first %s)\n%s", s.m.modelName(), want, first, s.log())
	}
	if !strings.Contains(s.view(), want+" · ") {
		t.Errorf("status bar:\n%s", s.view())
	}
	// Esc closes without a change.
	s.typeText("/model")
	s.send(tea.KeyPressMsg{Code: tea.KeyEscape})
	if s.m.picker != nil || s.m.modelName() != want {
		t.Fatalf("Esc: picker %v, model %s", s.m.picker != nil, s.m.modelName())
	}
	// A name in full, and a single match, switch at once.
	s.typeText("/model demo")
	if got := s.m.modelName(); got != "mock/demo" || s.m.picker != nil {
		t.Fatalf("/model demo: %s\n%s", got, s.log())
	}
	s.typeText("/model mock/echo")
	if got := s.m.modelName(); got != "mock/echo" {
		t.Fatalf("/model mock/echo: %s", got)
	}
	// Several matches: the picker, filtered.
	s.typeText("/model mock")
	if s.m.picker == nil || s.m.picker.filter != "mock" {
		t.Fatalf("/model mock: %+v", s.m.picker)
	}
	s.send(tea.KeyPressMsg{Code: tea.KeyEnter})
	if s.m.picker != nil || !strings.HasPrefix(s.m.modelName(), "mock/") {
		t.Fatalf("Enter on /model mock: %s", s.m.modelName())
	}
}

// TestResumePicker (issue 48): /resume alone opens a picker of this
// folder's other sessions; typing filters by the first prompt, Enter
// resumes the one chosen; /resume ID keeps resuming directly; a pasted
// filter stays one line and its keys are never taken as commands.
func TestResumePicker(t *testing.T) {
	s := newScreen(t, "", nil)
	var ids []string
	for _, p := range []string{"zebras first", "lions second", "zebras third"} {
		s.typeText(p)
		s.pump(func() bool { return !s.m.running })
		ids = append(ids, s.m.root)
		s.typeText("/new")
	}
	s.typeText("/resume")
	if s.m.picker == nil {
		t.Fatalf("/resume opened no picker:\n%s", s.log())
	}
	if v := s.view(); !strings.Contains(v, "resume a session of this folder") || !strings.Contains(v, "lions second") {
		t.Fatalf("picker view:\n%s", v)
	}
	s.send(tea.PasteMsg{Content: "lio\nns"})
	if got := s.m.picker.filter; got != "lio ns" && got != "lions" {
		t.Logf("pasted filter %q", got)
	}
	s.send(tea.KeyPressMsg{Code: tea.KeyBackspace})
	s.send(tea.KeyPressMsg{Code: tea.KeyBackspace})
	s.send(tea.KeyPressMsg{Code: tea.KeyBackspace})
	if rows := s.m.picker.shown(); len(rows) != 1 || rows[0].id != ids[1] {
		t.Fatalf("filter %q shows %+v", s.m.picker.filter, rows)
	}
	s.send(tea.KeyPressMsg{Code: tea.KeyEnter})
	if s.m.root != ids[1] || s.m.picker != nil {
		t.Fatalf("Enter resumed %s, want %s\n%s", s.m.root, ids[1], s.log())
	}
	s.typeText("/resume " + ids[2])
	if s.m.root != ids[2] {
		t.Fatalf("/resume ID resumed %s, want %s", s.m.root, ids[2])
	}
	s.typeText("/resume zebras")
	if s.m.root != ids[0] {
		t.Fatalf("/resume zebras (one other match) resumed %s, want %s", s.m.root, ids[0])
	}
}

// An isolated child's row names its branch (isolation: worktree), from
// its subagent/start on.
func TestChildTreeShowsBranch(t *testing.T) {
	s := newScreen(t, "", nil)
	root := s.m.root
	s.m.running, s.m.turnStart = true, s.clock
	s.feedItems(s.ev(root, session.TypeSubagentStart, session.SubagentStart{RunID: "r1", ChildSession: "c1", Agent: "general", Provider: "inprocess", Label: "edit", Branch: "reins/child-1a2b3c4d"}))
	if v := s.view(); !strings.Contains(v, "◌ general (inprocess) edit [reins/child-1a2b3c4d]  running") {
		t.Errorf("row lacks the branch:\n%s", v)
	}
	s.feedItems(s.ev(root, session.TypeSubagentEnd, session.SubagentEnd{RunID: "r1", StopReason: "completed", Branch: "reins/child-1a2b3c4d"}))
	if v := s.view(); !strings.Contains(v, "● general (inprocess) edit [reins/child-1a2b3c4d]  completed") {
		t.Errorf("settled row lacks the branch:\n%s", v)
	}
}

// TestCostIsTheLogsTally (issue 28, acceptance 3): /cost and the status
// line say what the session's log says by the one rule (session.Tally),
// after two turns of which the first delegated to an in-process child: the
// old sum added each turn's result, which counts every child the session
// ever settled, so the child's tokens came in twice.
func TestCostIsTheLogsTally(t *testing.T) {
	s := newScreen(t, `
replies:
  - match: DELEGATE
    toolCalls:
      - {id: d1, name: subagent, arguments: {description: helper, prompt: "CHILD-TASK"}}
    usage: {input: 100, output: 10}
  - match: CHILD-TASK
    text: CHILD-DONE
    usage: {input: 5000, output: 500}
  - match: CHILD-DONE
    text: delegated
    usage: {input: 200, output: 20}
  - match: AGAIN
    text: again
    usage: {input: 300, output: 30}
`, nil)
	for _, p := range []string{"DELEGATE it", "AGAIN please"} {
		s.typeText(p)
		s.pump(func() bool { return !s.m.running })
	}
	ld, err := session.Load(s.m.sess.Log.Path())
	if err != nil {
		t.Fatal(err)
	}
	tally := session.TallyOf(ld.Events)
	if u := tally.Usage(); u.InputTokens != 100+5000+200+300 || u.OutputTokens != 10+500+20+30 {
		t.Fatalf("the log's tally %+v", u)
	}
	s.committed = nil
	s.typeText("/cost")
	if got, want := s.log(), costLine(s.m.root, &tally); !strings.Contains(got, want) {
		t.Errorf("/cost said\n%s\nthe log's tally says\n%s", got, want)
	}
	if got := s.m.usage; got.InputTokens != 5600 || got.OutputTokens != 560 {
		t.Errorf("the status line's usage %+v, want the log's 5600 in 560 out", got)
	}
}

// TestRewindQuestion (issue 48): /rewind N asks before it acts. A key
// typed before the question is armed is no answer; any answer but y
// keeps the session as it is; y forks it, the prompt back in the editor.
// After /new, /rewind knows only the new session's prompts.
func TestRewindQuestion(t *testing.T) {
	s := newScreen(t, "", nil)
	first := s.m.root
	s.typeText("first prompt")
	s.pump(func() bool { return !s.m.running })
	ask := func() {
		t.Helper()
		for _, r := range "/rewind 1" {
			s.send(tea.KeyPressMsg{Code: r, Text: string(r)})
		}
		arm := s.send(tea.KeyPressMsg{Code: tea.KeyEnter})
		if s.m.rewindQ == nil || arm == nil {
			t.Fatalf("no question; committed:\n%s", s.log())
		}
		if !strings.Contains(s.log(), "/rewind 1 goes back to before “first prompt”") || !strings.Contains(s.log(), "no file to restore") {
			t.Errorf("the plan:\n%s", s.log())
		}
		s.send(tea.KeyPressMsg{Code: 'y', Text: "y"}) // before it showed: no answer
		if s.m.rewindQ == nil || s.m.root != first {
			t.Fatal("a key typed before the question was armed answered it")
		}
		s.send(arm())
		if !strings.Contains(s.view(), "[y/N]") {
			t.Errorf("the question is not on screen:\n%s", s.view())
		}
	}
	for _, key := range []tea.KeyPressMsg{{Code: tea.KeyEnter}, {Code: 'n', Text: "n"}, {Code: tea.KeyEscape}, {Code: 'x', Text: "x"}} {
		ask()
		s.committed = nil
		s.send(key)
		if s.m.rewindQ != nil || s.m.root != first || !strings.Contains(s.log(), "kept everything") || s.m.editor.Value() != "" {
			t.Errorf("%s: question %v, root %s, editor %q, said:\n%s", key, s.m.rewindQ, s.m.root, s.m.editor.Value(), s.log())
		}
	}
	ask()
	s.send(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if s.m.root == first || !strings.Contains(s.log(), "a fork of "+first) || s.m.editor.Value() != "first prompt" {
		t.Fatalf("y: root %s, editor %q, said:\n%s", s.m.root, s.m.editor.Value(), s.log())
	}
	s.m.editor.Reset()
	s.typeText("/new")
	s.committed = nil
	s.typeText("/rewind")
	if !strings.Contains(s.log(), "no earlier prompt of this session") {
		t.Errorf("/rewind after /new: %s", s.log())
	}
}
