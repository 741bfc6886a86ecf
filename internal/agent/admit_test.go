package agent

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tool"
)

type admitKey struct{}

// admitTool records, per call, whether Run saw the context its Admit
// returned and whether the release came after Run, once.
type admitTool struct {
	mu  sync.Mutex
	log map[string][]string
}

func (a *admitTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "admitted", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (a *admitTool) Needs() tool.Permission { return tool.ReadOnly }

func (a *admitTool) note(args json.RawMessage, what string) {
	var v struct{ ID string }
	json.Unmarshal(args, &v)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.log[v.ID] = append(a.log[v.ID], what)
}

func (a *admitTool) Admit(ctx context.Context, args json.RawMessage) (context.Context, func()) {
	a.note(args, "admit")
	return context.WithValue(ctx, admitKey{}, true), func() { a.note(args, "release") }
}

func (a *admitTool) Run(ctx context.Context, _ *tool.Env, args json.RawMessage) tool.Result {
	if ctx.Value(admitKey{}) == nil {
		a.note(args, "run without admission")
	} else {
		a.note(args, "run")
	}
	return tool.Result{Content: "ok"}
}

// TestAdmittedCallsReleasedAfterRun: a call runs under the context its
// admission returned and is released once, after it ran — a lone call (run
// on the turn's goroutine) as well as each call of a concurrent batch.
func TestAdmittedCallsReleasedAfterRun(t *testing.T) {
	lone := []llm.Block{{ID: "a", Name: "admitted", Arguments: `{"id":"a"}`}}
	batch := []llm.Block{
		{ID: "b", Name: "admitted", Arguments: `{"id":"b"}`},
		{ID: "c", Name: "admitted", Arguments: `{"id":"c"}`},
	}
	m := &script{replies: []func(context.Context, func(llm.Chunk) bool){
		chunks(callReply(llm.FinishToolCalls, lone...)...),
		chunks(callReply(llm.FinishToolCalls, batch...)...),
		chunks(textReply("done")...),
	}}
	at := &admitTool{log: map[string][]string{}}
	a := newAgent(t, m, at)
	if res := a.RunTurn(context.Background(), "hi"); res.Reason != session.ReasonCompleted {
		t.Fatalf("result %+v", res)
	}
	for _, id := range []string{"a", "b", "c"} {
		if got := at.log[id]; !equal(got, []string{"admit", "run", "release"}) {
			t.Errorf("call %s: %v, want admit, run, release", id, got)
		}
	}
}
