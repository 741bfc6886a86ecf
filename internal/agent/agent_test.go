package agent

import (
	"context"
	"encoding/json"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/retry"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tool"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// script is a model that answers request i with replies[i].
type script struct {
	mu       sync.Mutex
	replies  []func(ctx context.Context, yield func(llm.Chunk) bool)
	requests []*llm.Request
}

func (s *script) Stream(ctx context.Context, req *llm.Request) iter.Seq[llm.Chunk] {
	s.mu.Lock()
	i := len(s.requests)
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	return func(yield func(llm.Chunk) bool) {
		if i >= len(s.replies) {
			yield(llm.ErrorFinish("TEST", "no reply scripted"))
			return
		}
		s.replies[i](ctx, yield)
	}
}

func chunks(cs ...llm.Chunk) func(context.Context, func(llm.Chunk) bool) {
	return func(_ context.Context, yield func(llm.Chunk) bool) {
		for _, c := range cs {
			if !yield(c) {
				return
			}
		}
	}
}

func textReply(s string) []llm.Chunk {
	return []llm.Chunk{
		{Type: llm.ChunkBlockStart, Index: 0, Block: &llm.Block{Type: llm.BlockText}},
		{Type: llm.ChunkTextDelta, Index: 0, Delta: s},
		{Type: llm.ChunkBlockEnd, Index: 0},
		{Type: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 2}},
		finish(llm.FinishStop),
	}
}

func callReply(kind llm.FinishKind, calls ...llm.Block) []llm.Chunk {
	var out []llm.Chunk
	for i, c := range calls {
		out = append(out,
			llm.Chunk{Type: llm.ChunkBlockStart, Index: i, Block: &llm.Block{Type: llm.BlockToolCall, ID: c.ID, Name: c.Name}},
			llm.Chunk{Type: llm.ChunkToolCallDelta, Index: i, Delta: c.Arguments},
			llm.Chunk{Type: llm.ChunkBlockEnd, Index: i})
	}
	return append(out, finish(kind))
}

func finish(k llm.FinishKind) llm.Chunk {
	return llm.Chunk{Type: llm.ChunkFinish, Finish: &llm.Finish{Kind: k}}
}

// echoTool answers with its "say" argument; readOnly decides concurrency.
type echoTool struct {
	name     string
	readOnly bool
	gate     *sync.WaitGroup // when set, every call waits until all calls arrived
}

func (e echoTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: e.name, Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (e echoTool) Needs() tool.Permission {
	if e.readOnly {
		return tool.ReadOnly
	}
	return tool.WorkspaceWrite
}
func (e echoTool) Run(ctx context.Context, _ *tool.Env, args json.RawMessage) tool.Result {
	if e.gate != nil {
		e.gate.Done()
		e.gate.Wait()
	}
	var a struct{ Say string }
	if err := json.Unmarshal(args, &a); err != nil {
		return tool.Errorf("bad arguments")
	}
	return tool.Result{Content: a.Say}
}

func newAgent(t *testing.T, m llm.Model, tools ...tool.Tool) *Agent {
	t.Helper()
	l, err := session.Create(t.TempDir(), session.Header{ID: "s"}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return &Agent{
		Model: m, ModelName: "m", Provider: "test", Tools: tool.NewRegistry(tools...),
		Env: &tool.Env{Workspace: t.TempDir(), Permission: tool.WorkspaceWrite}, Log: l,
		Retry: &retry.Executor{Policy: retry.Policy{MaxRetries: 2, RetryableCodes: []llm.Code{llm.CodeEmptyResponse}}},
	}
}

func events(t *testing.T, a *Agent) []session.Event {
	t.Helper()
	a.Log.Flush()
	ld, err := session.Load(a.Log.Path())
	if err != nil {
		t.Fatal(err)
	}
	return ld.Events
}

func types(es []session.Event) []string {
	var out []string
	for _, e := range es {
		if e.Type != session.TypeAssistantChunk {
			out = append(out, e.Type)
		}
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPlainText(t *testing.T) {
	m := &script{replies: []func(context.Context, func(llm.Chunk) bool){chunks(textReply("hello")...)}}
	a := newAgent(t, m)
	res := a.RunTurn(context.Background(), "hi")
	if res.Reason != session.ReasonCompleted || res.Usage.OutputTokens != 2 {
		t.Fatalf("result %+v", res)
	}
	want := []string{"turn/start", "user/message", "step/start", "assistant/message", "step/end", "turn/end"}
	if got := types(events(t, a)); !equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
}

func TestToolCallThenAnswer(t *testing.T) {
	for _, kind := range []llm.FinishKind{llm.FinishToolCalls, llm.FinishStop} {
		t.Run(string(kind), func(t *testing.T) {
			m := &script{replies: []func(context.Context, func(llm.Chunk) bool){
				chunks(callReply(kind, llm.Block{ID: "c1", Name: "echo", Arguments: `{"say":"pong"}`})...),
				chunks(textReply("done")...),
			}}
			a := newAgent(t, m, echoTool{name: "echo"})
			res := a.RunTurn(context.Background(), "hi")
			if res.Reason != session.ReasonCompleted {
				t.Fatalf("result %+v", res)
			}
			// The second request carries the call and its result.
			h := m.requests[1].Messages
			if len(h) != 3 || h[2].Role != llm.RoleTool || h[2].Content[0].Content != "pong" || h[2].Content[0].CallID != "c1" {
				t.Errorf("second request history = %+v", h)
			}
			want := []string{"turn/start", "user/message", "step/start", "assistant/message", "tool/call", "tool/result", "step/end",
				"step/start", "assistant/message", "step/end", "turn/end"}
			if got := types(events(t, a)); !equal(got, want) {
				t.Errorf("events %v", got)
			}
		})
	}
}

func TestMaxTokensDropsToolCalls(t *testing.T) {
	reply := append([]llm.Chunk{{Type: llm.ChunkUsage, Usage: &llm.Usage{OutputTokens: 9}}},
		callReply(llm.FinishMaxTokens, llm.Block{ID: "c1", Name: "echo", Arguments: `{"say":"po`})...)
	m := &script{replies: []func(context.Context, func(llm.Chunk) bool){chunks(reply...)}}
	a := newAgent(t, m, echoTool{name: "echo"})
	res := a.RunTurn(context.Background(), "hi")
	if res.Reason != session.ReasonMaxTokens {
		t.Fatalf("result %+v", res)
	}
	es := events(t, a)
	for _, e := range es {
		if e.Type == session.TypeToolCall {
			t.Error("a call cut by max-tokens was executed")
		}
		if e.Type == session.TypeAssistantMessage {
			var d session.AssistantMessage
			e.Decode(&d)
			if len(d.Message.Content) != 0 || d.Usage == nil || d.Usage.OutputTokens != 9 {
				t.Errorf("assistant/message %s, want empty content with usage", e.Data)
			}
		}
	}
}

func TestRetryEmptyThenOK(t *testing.T) {
	empty := []llm.Chunk{llm.ErrorFinish(llm.CodeEmptyResponse, "empty")}
	m := &script{replies: []func(context.Context, func(llm.Chunk) bool){chunks(empty...), chunks(textReply("ok")...)}}
	a := newAgent(t, m)
	a.Retry.Sleep = func(context.Context, time.Duration) error { return nil }
	res := a.RunTurn(context.Background(), "hi")
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("result %+v", res)
	}
	want := []string{"turn/start", "user/message", "step/start", "llm/retry", "llm/retry-started", "assistant/message", "step/end", "turn/end"}
	if got := types(events(t, a)); !equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
}

func TestRetryExhausted(t *testing.T) {
	empty := chunks(llm.ErrorFinish(llm.CodeEmptyResponse, "empty"))
	m := &script{replies: []func(context.Context, func(llm.Chunk) bool){empty, empty, empty, empty}}
	a := newAgent(t, m)
	a.Retry.Sleep = func(context.Context, time.Duration) error { return nil }
	res := a.RunTurn(context.Background(), "hi")
	if res.Reason != session.ReasonError || res.Failure == nil || res.Failure.Code != llm.CodeEmptyResponse || len(m.requests) != 3 {
		t.Fatalf("result %+v after %d requests; want error EMPTY_RESPONSE after 3", res, len(m.requests))
	}
	for _, e := range events(t, a) {
		if e.Type == session.TypeAssistantMessage {
			t.Error("an assistant/message was written for a failed attempt")
		}
	}
}

func TestCancelMidStreamKeepsPartial(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	stream := func(ctx context.Context, yield func(llm.Chunk) bool) {
		yield(llm.Chunk{Type: llm.ChunkBlockStart, Block: &llm.Block{Type: llm.BlockText}})
		yield(llm.Chunk{Type: llm.ChunkTextDelta, Delta: "partial"})
		cancel(ErrAbortedByParent)
		<-ctx.Done()
		yield(llm.Chunk{Type: llm.ChunkFinish, Finish: &llm.Finish{Kind: llm.FinishAborted, Code: llm.CodeAborted}})
	}
	a := newAgent(t, &script{replies: []func(context.Context, func(llm.Chunk) bool){stream}})
	res := a.RunTurn(ctx, "hi")
	if res.Reason != session.ReasonAborted || res.By != session.AbortedByParent {
		t.Fatalf("result %+v", res)
	}
	es := events(t, a)
	var found bool
	for _, e := range es {
		if e.Type == session.TypeAssistantMessage {
			var d session.AssistantMessage
			e.Decode(&d)
			found = d.Interrupted && d.Message.Text() == "partial"
		}
	}
	if !found {
		t.Error("no interrupted assistant/message with the partial text")
	}
	if last := es[len(es)-1]; last.Type != session.TypeTurnEnd {
		t.Errorf("last event %s", last.Type)
	}
}

func TestMaxSteps(t *testing.T) {
	call := chunks(callReply(llm.FinishToolCalls, llm.Block{ID: "c", Name: "echo", Arguments: `{"say":"x"}`})...)
	m := &script{replies: []func(context.Context, func(llm.Chunk) bool){call, call, call}}
	a := newAgent(t, m, echoTool{name: "echo"})
	a.MaxSteps = 2
	res := a.RunTurn(context.Background(), "hi")
	if res.Reason != session.ReasonError || res.Failure.Code != llm.CodeMaxSteps || len(m.requests) != 2 {
		t.Fatalf("result %+v after %d requests", res, len(m.requests))
	}
}

func TestReadOnlyCallsRunConcurrentlyResultsInOrder(t *testing.T) {
	var gate sync.WaitGroup
	gate.Add(3) // each call waits for all three: only concurrent calls finish
	calls := []llm.Block{
		{ID: "a", Name: "look", Arguments: `{"say":"1"}`},
		{ID: "b", Name: "look", Arguments: `{"say":"2"}`},
		{ID: "c", Name: "look", Arguments: `{"say":"3"}`},
	}
	m := &script{replies: []func(context.Context, func(llm.Chunk) bool){chunks(callReply(llm.FinishToolCalls, calls...)...), chunks(textReply("ok")...)}}
	a := newAgent(t, m, echoTool{name: "look", readOnly: true, gate: &gate})
	if res := a.RunTurn(context.Background(), "hi"); res.Reason != session.ReasonCompleted {
		t.Fatalf("result %+v", res)
	}
	var order []string
	for _, e := range events(t, a) {
		if e.Type == session.TypeToolResult {
			var d session.ToolResult
			e.Decode(&d)
			order = append(order, d.CallID+"="+d.Content)
		}
	}
	if !equal(order, []string{"a=1", "b=2", "c=3"}) {
		t.Errorf("results %v", order)
	}
}

func TestPermissionRefusalIsAResult(t *testing.T) {
	m := &script{replies: []func(context.Context, func(llm.Chunk) bool){
		chunks(callReply(llm.FinishToolCalls, llm.Block{ID: "c", Name: "echo", Arguments: `{"say":"x"}`})...),
		chunks(textReply("ok")...),
	}}
	a := newAgent(t, m, echoTool{name: "echo"})
	a.Env.Permission = tool.ReadOnly
	if res := a.RunTurn(context.Background(), "hi"); res.Reason != session.ReasonCompleted {
		t.Fatalf("result %+v", res)
	}
	r := m.requests[1].Messages[2].Content[0]
	if !r.IsError {
		t.Errorf("refused call result %+v, want an error result", r)
	}
}

func TestSecondTurnSeesHistory(t *testing.T) {
	m := &script{replies: []func(context.Context, func(llm.Chunk) bool){chunks(textReply("one")...), chunks(textReply("two")...)}}
	a := newAgent(t, m)
	a.RunTurn(context.Background(), "first")
	res := a.RunTurn(context.Background(), "second")
	if res.Turn != 1 || len(m.requests[1].Messages) != 3 {
		t.Errorf("turn %d, history %d messages", res.Turn, len(m.requests[1].Messages))
	}
}

// TestCancelDuringRetrySleep: a turn waiting out an hour-long retry delay
// ends aborted as soon as it is cancelled, with llm/retry logged and no
// llm/retry-started (the retry never began).
func TestCancelDuringRetrySleep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	l, err := session.Create(t.TempDir(), session.Header{ID: "s"}, session.Options{
		Observe: func(_ session.Header, e session.Event) {
			if e.Type == session.TypeLLMRetry {
				cancel()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	empty := chunks(llm.ErrorFinish(llm.CodeEmptyResponse, "empty"))
	m := &script{replies: []func(context.Context, func(llm.Chunk) bool){empty, empty}}
	a := &Agent{Model: m, Tools: tool.NewRegistry(), Env: &tool.Env{Permission: tool.ReadOnly}, Log: l,
		Retry: &retry.Executor{Policy: retry.Policy{MaxRetries: 3, InitialDelay: time.Hour, MaxDelay: time.Hour,
			RetryableCodes: []llm.Code{llm.CodeEmptyResponse}}}}
	res := a.RunTurn(ctx, "hi")
	if res.Reason != session.ReasonAborted || res.By != session.AbortedByUser {
		t.Fatalf("result %+v, want aborted by user", res)
	}
	got := types(events(t, a))
	want := []string{"turn/start", "user/message", "step/start", "llm/retry", "step/end", "turn/end"}
	if !equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	if len(m.requests) != 1 {
		t.Errorf("%d requests, want 1", len(m.requests))
	}
}
