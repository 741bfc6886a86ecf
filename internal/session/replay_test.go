package session

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

// ReplayRoot is the sessions directory of stored logs that hold every event
// type (testdata/replay), written by the code before events had typed
// payloads (REINS_WRITE_REPLAY=1 go test -run TestWriteReplayLogs writes
// them again): TestReplayBytes here and the renderers' replay tests hold
// the log format and what reins prints for it to those bytes.
const ReplayRoot = "testdata/replay"

// Replay session ids.
const (
	replayParent   = "replay-parent"
	replayChild    = "replay-child"
	replayRepaired = "replay-repaired"
	// replayHooks holds the event types added after the first three logs
	// were stored (hook/run, skill/load). It is written last, so the
	// others' seqs and times stay as they were.
	replayHooks = "replay-hooks"
)

// ReplayIDs are the stored logs, in the order they were written.
var ReplayIDs = []string{replayParent, replayChild, replayRepaired, replayHooks}

// TestWriteReplayLogs writes the stored logs; it runs only on request.
func TestWriteReplayLogs(t *testing.T) {
	if os.Getenv("REINS_WRITE_REPLAY") != "1" {
		t.Skip("writes testdata/replay only with REINS_WRITE_REPLAY=1")
	}
	root, _ := filepath.Abs(ReplayRoot)
	os.RemoveAll(root)
	writeReplayLogs(t, root)
}

func writeReplayLogs(t *testing.T, root string) {
	t.Helper()
	clock := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(1234 * time.Millisecond); return clock }
	cost := 0.0123
	cost2 := 0.5
	usage := &llm.Usage{InputTokens: 1200, OutputTokens: 340, CacheReadTokens: 100, CacheWriteTokens: 7, ReasoningTokens: 12, CostUSD: &cost}
	hostile := "<b>&amp;</b> \u2028 \x1b[31mred\x1b[0m bad\xffutf8 tab\t\"quote\" back\\slash"

	// The child first, so the parent's subagent/start finds it.
	child, err := Create(root, Header{ID: replayChild, CreatedAt: now(), Cwd: "/work/child", ParentSession: replayParent, Origin: OriginSubagent, DelegationDepth: 1, Model: "m", Provider: "fake"}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, child, TypeTurnStart, TurnStart{Turn: 0})
	mustAppend(t, child, TypeUserMessage, UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "child task " + hostile}}}})
	mustAppend(t, child, TypeStepStart, StepStart{Turn: 0, Step: 0})
	mustAppend(t, child, TypeAssistantChunk, AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Delta: "child answer"}})
	mustAppend(t, child, TypeAssistantMessage, AssistantMessage{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: "child answer"}}}, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 2, CostUSD: &cost2}})
	mustAppend(t, child, TypeStepEnd, StepEnd{Turn: 0, Step: 0})
	mustAppend(t, child, TypeTurnEnd, TurnEnd{Turn: 0, Reason: ReasonCompleted, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 2, CostUSD: &cost2}})
	if err := child.Close(); err != nil {
		t.Fatal(err)
	}

	l, err := Create(root, Header{ID: replayParent, CreatedAt: now(), Cwd: "/work/<repo>", Model: "gpt-x", Provider: "openai", Agent: "coder", ReinsVersion: "v0.0.0-test"}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, TypeUserMessage, UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "permission mode: ask"}}}, Notice: NoticeMode})
	mustAppend(t, l, TypeTurnStart, TurnStart{Turn: 0, TraceID: "0123456789abcdef0123456789abcdef"})
	mustAppend(t, l, TypeUserMessage, UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "fix it " + hostile}}}})
	mustAppend(t, l, TypeStepStart, StepStart{Turn: 0, Step: 0})
	mustAppend(t, l, TypeAssistantChunk, AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkBlockStart, Index: 0, Block: &llm.Block{Type: llm.BlockReasoning}}})
	mustAppend(t, l, TypeAssistantChunk, AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkReasoningDelta, Delta: "hmm " + hostile}})
	mustAppend(t, l, TypeAssistantChunk, AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkBlockEnd, Index: 0, Signature: "sig=="}})
	mustAppend(t, l, TypeAssistantChunk, AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Index: 1, Delta: "I'll read <it>"}})
	mustAppend(t, l, TypeAssistantChunk, AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkBlockStart, Index: 2, Block: &llm.Block{Type: llm.BlockToolCall, ID: "call_1", Name: "read"}}})
	mustAppend(t, l, TypeAssistantChunk, AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkToolCallDelta, Index: 2, Delta: `{"path":"a.go"}`}})
	mustAppend(t, l, TypeAssistantChunk, AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkUsage, Usage: usage}})
	mustAppend(t, l, TypeAssistantChunk, AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkFinish, Finish: &llm.Finish{Kind: llm.FinishToolCalls, RetryAfter: 3 * time.Second}}})
	mustAppend(t, l, TypeAssistantMessage, AssistantMessage{Turn: 0, Step: 0, Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		{Type: llm.BlockReasoning, Text: "hmm " + hostile, Signature: "sig=="},
		{Type: llm.BlockText, Text: "I'll read <it>"},
		{Type: llm.BlockToolCall, ID: "call_1", Name: "read", Arguments: `{"path":"a.go"}`},
	}}, Usage: usage})
	mustAppend(t, l, TypeToolCall, ToolCall{Turn: 0, Step: 0, CallID: "call_1", Name: "read", Arguments: `{"path":"a.go"}`})
	mustAppend(t, l, TypeToolResult, ToolResult{Turn: 0, Step: 0, CallID: "call_1", Content: "package a\n" + hostile, Image: &llm.Image{MediaType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}}})
	mustAppend(t, l, TypeStepEnd, StepEnd{Turn: 0, Step: 0})
	mustAppend(t, l, TypeStepStart, StepStart{Turn: 0, Step: 1})
	mustAppend(t, l, TypeLLMRetry, LLMRetry{RetryID: "r1", Turn: 0, Step: 1, Provider: "openai", Retry: 1, MaxRetries: 3, DelayMs: 1500, Failure: Failure{Code: "RATE_LIMITED", Message: "rate limited"}})
	mustAppend(t, l, TypeLLMRetryStarted, LLMRetryStarted{RetryID: "r1", Turn: 0, Step: 1, Retry: 1})
	mustAppend(t, l, TypeToolCall, ToolCall{Turn: 0, Step: 1, CallID: "call_2", Name: "subagent", Arguments: `{"task":"x"}`})
	mustAppend(t, l, TypeSubagentStart, SubagentStart{RunID: "run1", ChildSession: replayChild, Agent: "helper", Provider: "fake", Label: "look " + hostile, Branch: "reins/replay-child"})
	mustAppend(t, l, TypeSubagentEnd, SubagentEnd{RunID: "run1", StopReason: "completed", LastAssistantMessage: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: "child answer"}}}, Diagnostic: "fine", Usage: &llm.Usage{InputTokens: 10, OutputTokens: 2, CostUSD: &cost2}, DurationMs: 2468, Branch: "reins/replay-child", Worktree: "/work/wt"})
	mustAppend(t, l, TypeJobNotice, JobNotice{JobID: "job-1", Status: "done"})
	mustAppend(t, l, TypeToolResult, ToolResult{Turn: 0, Step: 1, CallID: "call_2", Content: "child answer", IsError: true})
	mustAppend(t, l, TypeSubagentStart, SubagentStart{RunID: "run2", ChildSession: replayChild, Agent: "helper", Provider: "fake", Label: "again", Background: true, Continues: replayChild})
	mustAppend(t, l, TypeSubagentEnd, SubagentEnd{RunID: "run2", StopReason: "aborted", Continues: replayChild})
	mustAppend(t, l, TypeAssistantMessage, AssistantMessage{Turn: 0, Step: 1, Message: llm.Message{Role: llm.RoleAssistant}, Interrupted: true})
	mustAppend(t, l, TypeStepEnd, StepEnd{Turn: 0, Step: 1})
	mustAppend(t, l, TypeTurnEnd, TurnEnd{Turn: 0, Reason: ReasonCompleted, Usage: usage})
	mustAppend(t, l, "x/future", map[string]any{"what": "a type this reins does not know", "n": 1.5, "list": []any{1, "two", nil}})
	mustAppend(t, l, TypeTurnStart, TurnStart{Turn: 1})
	mustAppend(t, l, TypeUserMessage, UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "go on"}}}})
	mustAppend(t, l, TypeContextCompacted, ContextCompacted{Turn: 1, Summary: "summary " + hostile, Replaces: SeqRange{FromSeq: 1, ToSeq: 20}, Usage: &llm.Usage{InputTokens: 5, OutputTokens: 1}, Reason: CompactForced})
	mustAppend(t, l, TypeStepStart, StepStart{Turn: 1, Step: 0})
	mustAppend(t, l, TypeAssistantMessage, AssistantMessage{Turn: 1, Step: 0, Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: "stopped"}}}, Interrupted: true})
	mustAppend(t, l, TypeTurnEnd, TurnEnd{Turn: 1, Reason: ReasonAborted, By: AbortedByUser, Failure: &Failure{Code: "ABORTED", Message: "aborted by the user"}})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// A log a crash cut: an open turn and half a line.
	r, err := Create(root, Header{ID: replayRepaired, CreatedAt: now(), Cwd: "/work"}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, r, TypeTurnStart, TurnStart{Turn: 0})
	mustAppend(t, r, TypeUserMessage, UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "crash"}}}})
	mustAppend(t, r, TypeStepStart, StepStart{Turn: 0, Step: 0})
	mustAppend(t, r, TypeAssistantMessage, AssistantMessage{Turn: 0, Step: 0, Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: "partial"}}}, Usage: &llm.Usage{InputTokens: 3, OutputTokens: 4}})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(root, replayRepaired, FileName), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"step/end","seq":4,"time":"2026-12-01T10:0`)
	f.Close()

	// Hooks and skills, as the harness writes them: the user's /NAME
	// loads a skill before its turn; hooks run around the prompt, a tool
	// call (one denies, one rewrites the input and fails) and the stop.
	k, err := Create(root, Header{ID: replayHooks, CreatedAt: now(), Cwd: "/work/hooks", Model: "m", Provider: "fake"}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, k, TypeSkillLoad, SkillLoad{Name: "review", Origin: "project", Path: "/work/hooks/.reins/skills/review/SKILL.md", By: "user", AllowedTools: []string{"read", "grep"}})
	mustAppend(t, k, TypeTurnStart, TurnStart{Turn: 0})
	mustAppend(t, k, TypeHookRun, HookRun{Event: "UserPromptSubmit", Command: "echo ctx " + hostile, Source: "/work/hooks/.claude/settings.json", Exit: 0, DurationMs: 12, ToModel: "context " + hostile})
	mustAppend(t, k, TypeUserMessage, UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "review it"}}}})
	mustAppend(t, k, TypeStepStart, StepStart{Turn: 0, Step: 0})
	mustAppend(t, k, TypeAssistantMessage, AssistantMessage{Turn: 0, Step: 0, Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		{Type: llm.BlockToolCall, ID: "call_s", Name: "skill", Arguments: `{"name":"lint"}`},
		{Type: llm.BlockToolCall, ID: "call_b", Name: "bash", Arguments: `{"command":"rm -rf /"}`},
	}}, Usage: &llm.Usage{InputTokens: 20, OutputTokens: 5}})
	mustAppend(t, k, TypeToolCall, ToolCall{Turn: 0, Step: 0, CallID: "call_s", Name: "skill", Arguments: `{"name":"lint"}`})
	mustAppend(t, k, TypeSkillLoad, SkillLoad{Name: "lint", Origin: "user", Path: "/root/.reins/skills/lint/SKILL.md", By: "model"})
	mustAppend(t, k, TypeToolResult, ToolResult{Turn: 0, Step: 0, CallID: "call_s", Content: "skill lint loaded"})
	mustAppend(t, k, TypeToolCall, ToolCall{Turn: 0, Step: 0, CallID: "call_b", Name: "bash", Arguments: `{"command":"rm -rf /"}`})
	mustAppend(t, k, TypeHookRun, HookRun{Event: "PreToolUse", Tool: "Bash", CallID: "call_b", Command: "./guard.sh", Source: "/work/hooks/.claude/settings.json", Confined: true, Exit: 2, DurationMs: 40, Decision: "deny", ToModel: "no " + hostile, ToUser: "blocked rm"})
	mustAppend(t, k, TypeHookRun, HookRun{Event: "PreToolUse", Tool: "Bash", CallID: "call_b", Command: "./rewrite.sh", Source: "/root/.claude/settings.json", Exit: -1, DurationMs: 60000, Problem: "timed out after 60s", Input: json.RawMessage(`{"command":"ls"}`)})
	mustAppend(t, k, TypeToolResult, ToolResult{Turn: 0, Step: 0, CallID: "call_b", Content: "denied by a hook: no", IsError: true})
	mustAppend(t, k, TypeHookRun, HookRun{Event: "PostToolUse", Tool: "Bash", CallID: "call_b", Command: "./log.sh", Source: "/work/hooks/.claude/settings.json", Exit: 0, DurationMs: 3})
	mustAppend(t, k, TypeStepEnd, StepEnd{Turn: 0, Step: 0})
	mustAppend(t, k, TypeHookRun, HookRun{Event: "Stop", Command: "./stop.sh", Source: "/work/hooks/.claude/settings.json", Exit: 0, DurationMs: 5, Decision: "block", ToModel: "go on"})
	mustAppend(t, k, TypeUserMessage, UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "go on"}}}, Notice: NoticeHook})
	mustAppend(t, k, TypeTurnEnd, TurnEnd{Turn: 0, Reason: ReasonCompleted, Usage: &llm.Usage{InputTokens: 20, OutputTokens: 5}})
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
}

func mustAppend(t *testing.T, l *Log, typ string, data any) {
	t.Helper()
	if _, err := l.Append(typ, data); err != nil {
		t.Fatal(err)
	}
}

// TestReplayBytes loads every stored log and writes each event back: the
// bytes are the file's, line for line (the repaired log's half line
// aside), and every event type of docs/events.md is among them.
func TestReplayBytes(t *testing.T) {
	seen := map[string]bool{}
	for _, id := range ReplayIDs {
		path := filepath.Join(ReplayRoot, id, FileName)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ld, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(raw), "\n")
		hdr, err := json.Marshal(ld.Header)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(hdr) + "\n"; got != lines[0] {
			t.Errorf("%s header:\n got %s\nwant %s", id, got, lines[0])
		}
		for i, e := range ld.Events {
			seen[e.Type] = true
			if ld.Repair.ClosedTurn && i == len(ld.Events)-1 {
				continue // the turn/end the repair added
			}
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := string(b)+"\n", lines[i+1]; got != want {
				t.Errorf("%s seq %d:\n got %s\nwant %s", id, e.Seq, got, want)
			}
			var line []byte
			if line, err = appendEventLine(nil, e); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(line, []byte(lines[i+1])) {
				t.Errorf("%s seq %d appendEventLine:\n got %s\nwant %s", id, e.Seq, line, lines[i+1])
			}
		}
		if id == replayRepaired && !ld.Repair.ClosedTurn {
			t.Errorf("%s: not repaired: %+v", id, ld.Repair)
		}
	}
	for _, typ := range append(replayTypes(), "x/future") {
		if !seen[typ] {
			t.Errorf("no %s among the stored logs", typ)
		}
	}
}

// replayTypes is every event type with a payload (buildPayloads), sorted.
func replayTypes() []string {
	var types []string
	for typ := range payloads() {
		types = append(types, typ)
	}
	slices.Sort(types)
	return types
}

// TestReplayCoversEveryType fails when an event type is registered in
// buildPayloads but no stored log holds one: a new type gets events in
// writeReplayLogs (appended after the others, so their bytes stay) and
// the renderers' goldens gain its lines.
func TestReplayCoversEveryType(t *testing.T) {
	seen := map[string]bool{}
	for _, id := range ReplayIDs {
		ld, err := Load(filepath.Join(ReplayRoot, id, FileName))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ld.Events {
			seen[e.Type] = true
		}
	}
	for _, typ := range replayTypes() {
		if !seen[typ] {
			t.Errorf("event type %s is registered in buildPayloads but no stored log of %s holds one", typ, ReplayRoot)
		}
	}
}
