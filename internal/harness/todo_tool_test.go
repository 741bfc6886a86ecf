package harness

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
	"github.com/reinsdev/reins/internal/todo"
	"github.com/reinsdev/reins/internal/tool"
)

// TestSessionTodoAndWebfetchTools (issue 30 item 8): every session has
// todo and webfetch, the model is offered both, and a read-only session's
// todo call runs unasked, its list kept by the session's tool and recorded
// in the log as the call's arguments.
func TestSessionTodoAndWebfetchTools(t *testing.T) {
	f := newFixture(t, `
replies:
  - match: PLAN
    toolCalls:
      - {id: t1, name: todo, arguments: {items: [{text: "read it", state: done}, {text: "fix it", state: in_progress}]}}
  - match: "todo list updated"
    text: planned
`, map[string]string{})
	m, err := f.h.ResolveModel("openai/test", f.url)
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.h.NewSession(SessionOptions{Model: m, Permission: tool.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	asked := 0
	s.Agent.Env.Ask = func(context.Context, string, json.RawMessage) tool.Answer { asked++; return tool.Answer{} }
	s.Run(context.Background(), "PLAN")
	if got := requestTools(t, f.srv.Requests()[0].Body); !slices.Contains(got, "todo") || !slices.Contains(got, "webfetch") {
		t.Errorf("tools offered %v", got)
	}
	res := toolResults(t, s)
	if len(res) != 1 || res[0].IsError || !strings.Contains(res[0].Content, "2 items (0 pending, 1 in progress, 1 done)") || asked != 0 {
		t.Fatalf("results %+v, asked %d", res, asked)
	}
	td, _ := s.Agent.Tools.Get(todo.Name)
	if l := td.(*todo.Tool).List(); len(l) != 2 || l[1].Text != "fix it" || l[1].State != todo.InProgress {
		t.Errorf("session list %+v", l)
	}
	calls := testutil.Decoded[session.ToolCall](t, loadEvents(t, s.Log.Path()), session.TypeToolCall)
	if len(calls) != 1 {
		t.Fatalf("calls %+v", calls)
	}
	if l, err := todo.Parse([]byte(calls[0].Arguments)); err != nil || len(l) != 2 {
		t.Errorf("logged list %v %v", l, err)
	}
}
