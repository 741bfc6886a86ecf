package view

import (
	"fmt"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

// The fixtures are session logs written with the real session writer
// (session.Create, Append): the view reads logs, so a log written the way
// reins writes it is the real input. Times come from a clock that ticks a
// second per event, so the timeline has width.

// hostile is a child's answer that would run script if the page ever
// parsed text as HTML: both set window.__pwned.
const hostile = `look: <script>window.__pwned=1</script><img src=x onerror="window.__pwned=1"> done`

// hostileLabel is a model-written task label that would run script as HTML.
const hostileLabel = `<img src=y onerror="window.__pwned=2"><b>bold</b>`

// acpDiagnostic is the fixed diagnostic of an ACP child whose process died.
const acpDiagnostic = "Subagent failure (provider: acp; stage: prompt; category: process-exit; stop reason: error; exit code: 1)"

type fixture struct {
	t    testing.TB
	root string
	now  time.Time
}

func newFixture(t testing.TB) *fixture {
	// A recent start, so that a running session's bar (which ends now)
	// is as long as its events are.
	return &fixture{t: t, root: t.TempDir(), now: time.Now().UTC().Add(-time.Minute).Truncate(time.Second)}
}

func (f *fixture) tick() time.Time {
	f.now = f.now.Add(time.Second)
	return f.now
}

// create starts a session log; the caller closes it (or keeps it open: a
// held log is a running session).
func (f *fixture) create(id, parent string) *session.Log {
	f.t.Helper()
	h := session.Header{ID: id, CreatedAt: f.tick(), Cwd: "/work/repo", ParentSession: parent, Provider: "deepseek", Model: "deepseek-chat"}
	if parent != "" {
		h.Origin, h.DelegationDepth = session.OriginSubagent, 1
	}
	l, err := session.Create(f.root, h, session.Options{Now: f.tick})
	if err != nil {
		f.t.Fatal(err)
	}
	return l
}

func add(t testing.TB, l *session.Log, typ string, data any) {
	t.Helper()
	if _, err := l.Append(typ, data); err != nil {
		t.Fatal(err)
	}
}

func closeLog(t testing.TB, l *session.Log) {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func cost(x float64) *float64 { return &x }

func text(s string) *llm.Message {
	return &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: s}}}
}

// child writes a whole child session that ends with reason and answer.
func (f *fixture) child(id, parent string, reason session.EndReason, answer string) {
	f.t.Helper()
	l := f.create(id, parent)
	add(f.t, l, session.TypeTurnStart, session.TurnStart{Turn: 0})
	add(f.t, l, session.TypeUserMessage, session.UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "child task " + id}}}})
	add(f.t, l, session.TypeStepStart, session.StepStart{})
	add(f.t, l, session.TypeAssistantMessage, session.AssistantMessage{Message: *text(answer), Usage: &llm.Usage{InputTokens: 100, OutputTokens: 50}})
	add(f.t, l, session.TypeStepEnd, session.StepEnd{})
	add(f.t, l, session.TypeTurnEnd, session.TurnEnd{Reason: reason, Usage: &llm.Usage{InputTokens: 100, OutputTokens: 50}})
	closeLog(f.t, l)
}

// tree writes the session "root" of the acceptance test: a max-tokens
// partial in-process child, an ACP child that crashed, and a background
// job whose answer is hostile. With open, the root's log is returned
// still held (a running session, its turn open); otherwise it is closed
// and nil is returned.
func (f *fixture) tree(open bool) *session.Log {
	t := f.t
	l := f.create("root", "")
	add(t, l, session.TypeTurnStart, session.TurnStart{Turn: 0})
	add(t, l, session.TypeUserMessage, session.UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "review the repo"}}}})
	add(t, l, session.TypeStepStart, session.StepStart{})
	add(t, l, session.TypeLLMRetry, session.LLMRetry{RetryID: "r1", Provider: "deepseek", Retry: 1, MaxRetries: 3, DelayMs: 500, Failure: session.Failure{Code: "RATE_LIMIT", Message: "rate limited"}})
	add(t, l, session.TypeLLMRetryStarted, session.LLMRetryStarted{RetryID: "r1", Retry: 1})
	add(t, l, session.TypeAssistantMessage, session.AssistantMessage{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		{Type: llm.BlockReasoning, Text: "I should delegate."},
		{Type: llm.BlockToolCall, ID: "c1", Name: "subagent", Arguments: `{"description":"scan"}`},
	}}, Usage: &llm.Usage{InputTokens: 1000, OutputTokens: 20, CostUSD: cost(0.0012)}})
	add(t, l, session.TypeToolCall, session.ToolCall{CallID: "c1", Name: "subagent", Arguments: `{"description":"scan"}`})

	// A: in-process, cut by max-tokens, its partial answer handed over.
	add(t, l, session.TypeSubagentStart, session.SubagentStart{RunID: "run-a", ChildSession: "child-a", Agent: "scanner", Provider: "inprocess", Label: "scan"})
	f.child("child-a", "root", session.ReasonMaxTokens, "partial findings: the parser")
	add(t, l, session.TypeSubagentEnd, session.SubagentEnd{RunID: "run-a", StopReason: string(session.ReasonMaxTokens), LastAssistantMessage: text("partial findings: the parser"),
		Usage: &llm.Usage{InputTokens: 100, OutputTokens: 50, CostUSD: cost(0.0003)}, DurationMs: 3000})

	// B: an ACP child whose process died; no reins session.
	add(t, l, session.TypeSubagentStart, session.SubagentStart{RunID: "run-b", Agent: "claude", Provider: "acp", Label: "review " + hostileLabel})
	add(t, l, session.TypeSubagentEnd, session.SubagentEnd{RunID: "run-b", StopReason: string(session.ReasonError), Diagnostic: acpDiagnostic, DurationMs: 1000})
	add(t, l, session.TypeToolResult, session.ToolResult{CallID: "c1", Content: "max-tokens: partial findings"})
	// A hook's run: its command and its text to the user are the hook
	// author's and the hook's own, hostile here.
	add(t, l, session.TypeHookRun, session.HookRun{Event: "PostToolUse", Tool: "Task", CallID: "c1", Command: "./guard.sh " + hostile,
		Source: "/work/repo/.claude/settings.json", Confined: true, Exit: 2, DurationMs: 1500, Decision: "block", ToModel: "check the parser", ToUser: hostile})
	add(t, l, session.TypeStepEnd, session.StepEnd{})

	// C: a background job, settled later with a hostile answer.
	add(t, l, session.TypeStepStart, session.StepStart{Step: 1})
	add(t, l, session.TypeSubagentStart, session.SubagentStart{RunID: "run-c", ChildSession: "child-c", Agent: "writer", Provider: "inprocess", Label: "draft", Background: true})
	f.child("child-c", "root", session.ReasonCompleted, hostile)
	add(t, l, session.TypeToolResult, session.ToolResult{CallID: "c2", Content: "Started background job job-1"})
	add(t, l, session.TypeSubagentEnd, session.SubagentEnd{RunID: "run-c", StopReason: string(session.ReasonCompleted), LastAssistantMessage: text(hostile), DurationMs: 4000})
	add(t, l, session.TypeJobNotice, session.JobNotice{JobID: "job-1", Status: "completed"})
	add(t, l, "context/compacted", map[string]any{"turn": 0, "summary": "earlier work, summed up", "replaces": map[string]int{"fromSeq": 1, "toSeq": 5}})
	add(t, l, "future/event", map[string]string{"what": "<b>unknown</b>"})
	add(t, l, session.TypeStepEnd, session.StepEnd{Step: 1})
	if open {
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
		return l
	}
	add(t, l, session.TypeTurnEnd, session.TurnEnd{Reason: session.ReasonCompleted, Usage: &llm.Usage{InputTokens: 1000, OutputTokens: 20, CostUSD: cost(0.0012)}})
	closeLog(t, l)
	return nil
}

// wide writes a session "wide" with n completed in-process children.
func (f *fixture) wide(n int) {
	t := f.t
	l := f.create("wide", "")
	add(t, l, session.TypeTurnStart, session.TurnStart{Turn: 0})
	add(t, l, session.TypeUserMessage, session.UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "split it " + hostile}}}})
	add(t, l, session.TypeStepStart, session.StepStart{})
	for i := range n {
		run, id := fmt.Sprintf("run-%03d", i), fmt.Sprintf("wide-child-%03d", i)
		add(t, l, session.TypeSubagentStart, session.SubagentStart{RunID: run, ChildSession: id, Agent: "worker", Provider: "inprocess", Label: fmt.Sprintf("part %d", i)})
		f.child(id, "wide", session.ReasonCompleted, fmt.Sprintf("part %d done", i))
		add(t, l, session.TypeSubagentEnd, session.SubagentEnd{RunID: run, StopReason: string(session.ReasonCompleted), LastAssistantMessage: text("done"), DurationMs: 2000})
	}
	add(t, l, session.TypeStepEnd, session.StepEnd{})
	add(t, l, session.TypeTurnEnd, session.TurnEnd{Reason: session.ReasonCompleted})
	closeLog(t, l)
}
