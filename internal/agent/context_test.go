package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/reinsdev/reins/internal/compact"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

// windowModel is a scripted model with a real window: it measures each
// request as a tokenizer would (its JSON bytes over three, so the loop's
// four-bytes estimate must calibrate), refuses one that does not fit with
// CONTEXT_WINDOW_EXCEEDED, answers summary requests (those without tools)
// with a summary, and otherwise calls the echo tool until it has made
// steps calls, then answers "done".
type windowModel struct {
	window  int // tokens; 0: no limit
	steps   int
	payload int // bytes each echo call asks for
	// overflowAlways refuses every request with tools after the first
	// overflowAfter requests, whatever their size.
	overflowAfter int

	mu        sync.Mutex
	calls     int
	summaries int
	overflows int
	largest   int
	requests  []*llm.Request // the requests with tools
	bad       string         // first malformed history seen
}

func measure(req *llm.Request) int {
	b, _ := json.Marshal(req.Messages)
	t, _ := json.Marshal(req.Tools)
	return (len(req.System) + len(b) + len(t)) / 3
}

func (w *windowModel) Stream(_ context.Context, req *llm.Request) iter.Seq[llm.Chunk] {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := measure(req)
	var reply []llm.Chunk
	usage := llm.Chunk{Type: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: n, OutputTokens: 20}}
	switch {
	case w.window > 0 && n > w.window || len(req.Tools) > 0 && w.overflowAfter > 0 && len(w.requests) >= w.overflowAfter:
		w.overflows++
		reply = []llm.Chunk{llm.ErrorFinish(llm.CodeContextWindowExceeded, "prompt is too long")}
	case len(req.Tools) == 0:
		w.summaries++
		w.largest = max(w.largest, n)
		reply = append(textReply(fmt.Sprintf("summary %d: the agent echoed payloads; %s", w.summaries, strings.Repeat("s", 400))), usage)
	default:
		w.largest = max(w.largest, n)
		w.requests = append(w.requests, req)
		if w.bad == "" {
			w.bad = checkHistory(req.Messages)
		}
		if w.calls >= w.steps {
			reply = append(textReply("done"), usage)
			break
		}
		w.calls++
		args, _ := json.Marshal(map[string]string{"say": fmt.Sprintf("STEP-%d-", w.calls) + strings.Repeat("p", w.payload)})
		reply = append(callReply(llm.FinishToolCalls, llm.Block{ID: fmt.Sprintf("c%d", w.calls), Name: "echo", Arguments: string(args)}), usage)
	}
	return func(yield func(llm.Chunk) bool) {
		for _, c := range reply {
			if !yield(c) {
				return
			}
		}
	}
}

// checkHistory returns what a provider would reject in h: a tool result
// without its call before it, a call without its result, or a history that
// does not start with the user's prompt.
func checkHistory(h []llm.Message) string {
	if len(h) == 0 || h[0].Role != llm.RoleUser {
		return "history does not start with a user message"
	}
	called := map[string]bool{}
	for _, m := range h {
		for _, b := range m.Content {
			switch b.Type {
			case llm.BlockToolCall:
				called[b.ID] = true
			case llm.BlockToolResult:
				if !called[b.CallID] {
					return "tool result " + b.CallID + " without its call"
				}
				delete(called, b.CallID)
			}
		}
	}
	if len(called) > 0 {
		return fmt.Sprintf("%d calls without results", len(called))
	}
	return ""
}

func compactions(t *testing.T, es []session.Event) []session.ContextCompacted {
	t.Helper()
	var out []session.ContextCompacted
	for _, e := range es {
		if e.Type == session.TypeContextCompacted {
			var d session.ContextCompacted
			if err := e.Decode(&d); err != nil {
				t.Fatal(err)
			}
			out = append(out, d)
		}
	}
	return out
}

// sameAsLog checks that the history the agent holds is what the log
// derives (what --resume will send).
func sameAsLog(t *testing.T, a *Agent) {
	t.Helper()
	h, err := session.History(events(t, a))
	if err != nil {
		t.Fatal(err)
	}
	if got := a.snapshotForTest(); !reflect.DeepEqual(got, h) {
		t.Fatalf("agent history (%d messages) differs from the log's (%d)", len(got), len(h))
	}
}

func (a *Agent) snapshotForTest() []llm.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]llm.Message(nil), a.history...)
}

// TestLongLoopCompacts is acceptance 1 of issue 18: a 1,000-step tool
// loop against a model with an 8,000-token window completes, compacting
// as needed, and no request passes the window.
func TestLongLoopCompacts(t *testing.T) {
	const window, steps = 8000, 1000
	m := &windowModel{window: window, steps: steps, payload: 600}
	a := newAgent(t, m, echoTool{name: "echo"})
	a.Window, a.MaxSteps = window, steps+10
	res := a.RunTurn(context.Background(), "echo the payloads")
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("turn ended %s %+v", res.Reason, res.Failure)
	}
	if m.calls != steps {
		t.Fatalf("%d tool calls, want %d", m.calls, steps)
	}
	if m.bad != "" {
		t.Fatalf("a request had a malformed history: %s", m.bad)
	}
	es := events(t, a)
	cs := compactions(t, es)
	t.Logf("%d steps, %d compactions, %d overflows, largest request %d of %d tokens, calibration %.2f",
		steps, len(cs), m.overflows, m.largest, window, a.ctx.est.Ratio())
	if len(cs) < 10 || m.summaries != len(cs) {
		t.Fatalf("%d compactions for %d summaries: want one per summary, and many", len(cs), m.summaries)
	}
	if m.overflows != 0 {
		t.Fatalf("%d requests overflowed: compaction came too late", m.overflows)
	}
	if m.largest > window {
		t.Fatalf("largest request %d tokens, window %d", m.largest, window)
	}
	for _, c := range cs {
		if c.Reason != session.CompactThreshold || c.Usage == nil || c.Replaces.FromSeq > c.Replaces.ToSeq {
			t.Fatalf("compaction %+v", c)
		}
	}
	// Every request starts with the user's prompt.
	for _, r := range m.requests {
		if r.Messages[0].Text() != "echo the payloads" {
			t.Fatalf("a request starts with %q", r.Messages[0].Text())
		}
	}
	sameAsLog(t, a)
	// The turn's usage counts the summaries.
	if res.Usage.InputTokens <= 0 {
		t.Fatalf("usage %+v", res.Usage)
	}
}

// TestOverflowRecoveredByOneCompaction is acceptance 2: with the window
// unknown to reins, the provider's CONTEXT_WINDOW_EXCEEDED mid-session
// costs one compaction and one more try of the step, and the turn
// completes.
func TestOverflowRecoveredByOneCompaction(t *testing.T) {
	m := &windowModel{window: 4000, steps: 40, payload: 600}
	a := newAgent(t, m, echoTool{name: "echo"})
	res := a.RunTurn(context.Background(), "echo the payloads")
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("turn ended %s %+v", res.Reason, res.Failure)
	}
	es := events(t, a)
	cs := compactions(t, es)
	if m.overflows == 0 || len(cs) != m.overflows {
		t.Fatalf("%d overflows, %d compactions: want one compaction per overflow", m.overflows, len(cs))
	}
	for _, c := range cs {
		if c.Reason != session.CompactOverflow {
			t.Fatalf("compaction reason %q", c.Reason)
		}
	}
	// The overflow is no retry of the provider policy's: no llm/retry.
	for _, e := range es {
		if e.Type == session.TypeLLMRetry {
			t.Fatalf("an llm/retry was recorded")
		}
	}
	if m.bad != "" {
		t.Fatal(m.bad)
	}
	sameAsLog(t, a)
}

// TestOverflowAfterCompactionEndsTheTurn: a provider that still refuses
// after the compaction ends the turn with its code; the loop compacts once
// per step, never in a loop.
func TestOverflowAfterCompactionEndsTheTurn(t *testing.T) {
	m := &windowModel{steps: 10, payload: 100, overflowAfter: 5}
	a := newAgent(t, m, echoTool{name: "echo"})
	res := a.RunTurn(context.Background(), "go")
	if res.Reason != session.ReasonError || res.Failure == nil || res.Failure.Code != llm.CodeContextWindowExceeded {
		t.Fatalf("turn ended %s %+v", res.Reason, res.Failure)
	}
	if cs := compactions(t, events(t, a)); len(cs) != 1 || m.overflows != 2 {
		t.Fatalf("%d compactions, %d overflows: want 1 and 2", len(cs), m.overflows)
	}
}

// TestResumeSendsSummary is acceptance 3: a session resumed after a
// compaction sends the summary, not the turns it replaced.
func TestResumeSendsSummary(t *testing.T) {
	m := &windowModel{window: 8000, steps: 60, payload: 600}
	a := newAgent(t, m, echoTool{name: "echo"})
	a.Window, a.MaxSteps = 8000, 100
	if res := a.RunTurn(context.Background(), "echo the payloads"); res.Reason != session.ReasonCompleted {
		t.Fatalf("turn ended %s", res.Reason)
	}
	cs := compactions(t, events(t, a))
	if len(cs) == 0 {
		t.Fatal("no compaction in the first run")
	}
	want := a.snapshotForTest()
	path := a.Log.Path()
	a.Log.Close()

	l, ld, err := session.Reopen(path, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	m2 := &windowModel{window: 8000}
	b := newAgent(t, m2, echoTool{name: "echo"})
	b.Log, b.Window = l, 8000
	if err := b.LoadHistory(ld.Events); err != nil {
		t.Fatal(err)
	}
	if res := b.RunTurn(context.Background(), "and now?"); res.Reason != session.ReasonCompleted {
		t.Fatalf("resumed turn ended %s", res.Reason)
	}
	got := m2.requests[0].Messages
	if !reflect.DeepEqual(got[:len(got)-1], want) {
		t.Fatalf("the resumed request's history differs from the first run's last")
	}
	text := ""
	summaries := 0
	for _, msg := range got {
		if session.IsSummary(msg) {
			summaries++
		}
		for _, bl := range msg.Content {
			text += bl.Text + bl.Arguments + bl.Content + "\n"
		}
	}
	if summaries != 1 || !strings.Contains(text, cs[len(cs)-1].Summary) {
		t.Fatalf("%d summaries in the resumed request; want the latest", summaries)
	}
	for _, s := range []string{"STEP-1-", "STEP-2-", "STEP-10-"} {
		if strings.Contains(text, s) {
			t.Fatalf("the resumed request carries replaced step %q", s)
		}
	}
	if !strings.Contains(text, "STEP-60-") {
		t.Fatalf("the resumed request lacks the latest step")
	}
}

// TestToolResultCutInHistoryWholeInLog: a result above the bound enters
// the history cut, with a marker, and the log keeps it whole.
func TestToolResultCutInHistoryWholeInLog(t *testing.T) {
	big := strings.Repeat("b", 5000)
	m := &script{replies: []func(context.Context, func(llm.Chunk) bool){
		chunks(callReply(llm.FinishToolCalls, llm.Block{ID: "c1", Name: "echo", Arguments: `{"say":"` + big + `"}`})...),
		chunks(textReply("done")...),
	}}
	a := newAgent(t, m, echoTool{name: "echo"})
	a.Context = compact.Settings{MaxToolResultBytes: 1000}
	a.RunTurn(context.Background(), "hi")
	sent := m.requests[1].Messages[2].Content[0].Content
	if len(sent) > 1200 || !strings.Contains(sent, "the whole result is in the session log") {
		t.Fatalf("the history's result is %d bytes: %.80q", len(sent), sent)
	}
	for _, e := range events(t, a) {
		if e.Type == session.TypeToolResult {
			var d session.ToolResult
			e.Decode(&d)
			if d.Content != big {
				t.Fatalf("the log's result is %d bytes, want the whole %d", len(d.Content), len(big))
			}
		}
	}
	sameAsLogCut(t, a)
}

// sameAsLogCut is sameAsLog for an agent that cuts results: LoadHistory
// applies the same bound.
func sameAsLogCut(t *testing.T, a *Agent) {
	t.Helper()
	b := &Agent{Context: a.Context, Window: a.Window}
	if err := b.LoadHistory(events(t, a)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.snapshotForTest(), b.snapshotForTest()) {
		t.Fatal("a resumed history differs from the live one")
	}
}

// TestForcedCompaction: Agent.Compact summarizes all but the latest step
// in a turn of its own, and says when there is nothing to summarize.
func TestForcedCompaction(t *testing.T) {
	m := &windowModel{steps: 5, payload: 50}
	a := newAgent(t, m, echoTool{name: "echo"})
	if res, ok := a.Compact(context.Background()); ok || res.Reason != session.ReasonCompleted {
		t.Fatalf("compacting an empty history: %v %+v", ok, res)
	}
	a.RunTurn(context.Background(), "go")
	res, ok := a.Compact(context.Background())
	if !ok || res.Reason != session.ReasonCompleted {
		t.Fatalf("Compact = %v %+v", ok, res)
	}
	cs := compactions(t, events(t, a))
	if len(cs) != 1 || cs[0].Reason != session.CompactForced || cs[0].Turn != res.Turn {
		t.Fatalf("compactions %+v", cs)
	}
	h := a.snapshotForTest()
	// prompt, summary, and the last step: the final answer.
	if len(h) != 3 || !session.IsSummary(h[1]) || h[2].Text() != "done" {
		t.Fatalf("history after /compact: %d messages", len(h))
	}
	sameAsLog(t, a)
}
