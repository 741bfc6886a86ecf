package todo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/tool"
)

func run(t *testing.T, reg *tool.Registry, perm tool.Permission, args string) tool.Result {
	t.Helper()
	asked := false
	env := &tool.Env{Workspace: t.TempDir(), Permission: perm, Ask: func(context.Context, string, json.RawMessage) tool.Answer {
		asked = true
		return tool.Answer{}
	}}
	res := reg.Run(context.Background(), env, Name, json.RawMessage(args))
	if asked {
		t.Fatalf("todo asked for approval")
	}
	return res
}

func TestTodoKeepsLatestListInEveryMode(t *testing.T) {
	td := New()
	reg := tool.NewRegistry(td)
	for _, perm := range []tool.Permission{tool.ReadOnly, tool.WorkspaceWrite, tool.FullAccess} {
		res := run(t, reg, perm, `{"items":[{"text":"read the code","state":"done"},{"text":"write the test","state":"in_progress"},{"text":"ship","state":"pending"}]}`)
		if res.IsError || !strings.Contains(res.Content, "3 items (1 pending, 1 in progress, 1 done)") {
			t.Fatalf("%s: %+v", perm, res)
		}
	}
	res := run(t, reg, tool.ReadOnly, `{"items":[{"text":"only","state":"pending"}]}`)
	if res.IsError {
		t.Fatal(res.Content)
	}
	if l := td.List(); len(l) != 1 || l[0].Text != "only" || l[0].State != Pending {
		t.Fatalf("list = %+v", l)
	}
}

func TestTodoRefusesBadListsAndKeepsTheOldOne(t *testing.T) {
	td := New()
	reg := tool.NewRegistry(td)
	if res := run(t, reg, tool.ReadOnly, `{"items":[{"text":"a","state":"pending"}]}`); res.IsError {
		t.Fatal(res.Content)
	}
	many := make([]Item, MaxItems+1)
	for i := range many {
		many[i] = Item{Text: fmt.Sprint(i), State: Pending}
	}
	tooMany, _ := json.Marshal(map[string]any{"items": many})
	long, _ := json.Marshal(map[string]any{"items": []Item{{Text: strings.Repeat("x", MaxItemText+1), State: Pending}}})
	for _, bad := range []string{
		`{}`, `not json`, `{"items":[{"text":"a","state":"later"}]}`, `{"items":[{"text":"  ","state":"done"}]}`,
		string(tooMany), string(long),
	} {
		res := run(t, reg, tool.ReadOnly, bad)
		if !res.IsError {
			t.Errorf("%.60s: accepted: %s", bad, res.Content)
		}
	}
	if l := td.List(); len(l) != 1 || l[0].Text != "a" {
		t.Fatalf("a refused list replaced the old one: %+v", l)
	}
	// The bounds themselves are accepted.
	many = many[:MaxItems]
	many[0].Text = strings.Repeat("y", MaxItemText)
	ok, _ := json.Marshal(map[string]any{"items": many})
	if res := run(t, reg, tool.ReadOnly, string(ok)); res.IsError {
		t.Fatal(res.Content)
	}
	// An empty list clears it.
	if res := run(t, reg, tool.ReadOnly, `{"items":[]}`); res.IsError || len(td.List()) != 0 {
		t.Fatalf("%+v %+v", res, td.List())
	}
}
