package harness

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
	"github.com/reinsdev/reins/internal/tool"
)

// Delegation never widens rights (issue 12, finding 5), for in-process
// children: tools are the intersection of the parent's and the agent
// file's, the mode at most the parent's, the limits the parent's. What a
// child got is read from the model requests the scripted server received.

func inprocAgent(name, marker, tools string) string {
	s := "---\nname: " + name + "\ndescription: an in-process child\n"
	if tools != "" {
		s += "tools: " + tools + "\n"
	}
	return s + "---\n" + marker + "\n"
}

// wireRequest reads a chat or Responses request (openai speaks
// Responses): the output cap and each tool's name, under either spelling.
type wireRequest struct {
	MaxTokens       int `json:"max_tokens"`
	MaxOutputTokens int `json:"max_output_tokens"`
	Tools           []struct {
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

func (f *fixture) requestsWith(t *testing.T, marker string) []wireRequest {
	t.Helper()
	var out []wireRequest
	for _, r := range f.srv.Requests() {
		if !strings.Contains(r.System, marker) {
			continue
		}
		var w wireRequest
		if err := json.Unmarshal(r.Body, &w); err != nil {
			t.Fatal(err)
		}
		w.MaxTokens = max(w.MaxTokens, w.MaxOutputTokens)
		for i := range w.Tools {
			if w.Tools[i].Function.Name == "" {
				w.Tools[i].Function.Name = w.Tools[i].Name
			}
		}
		out = append(out, w)
	}
	return out
}

func (f *fixture) sessionWith(t *testing.T, o SessionOptions) *Session {
	t.Helper()
	m, err := f.h.ResolveModel("openai/test", f.url)
	if err != nil {
		t.Fatal(err)
	}
	o.Model, o.System = m, "parent system prompt"
	s, err := f.h.NewSession(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestInProcessChildToolsAreTheIntersection(t *testing.T) {
	f := newFixture(t, `
replies:
  - match: MARK-WIDE
    text: wide done
  - match: MARK-NARROW
    text: narrow done
  - match: delegate-now
    toolCalls:
      - {id: a, name: subagent, arguments: {description: inherit the tools, agent: wide, prompt: "CHILD-TASK one"}}
      - {id: b, name: subagent, arguments: {description: ask for more tools, agent: narrow, prompt: "CHILD-TASK two"}}
fallback:
  text: parent done
`, map[string]string{
		".reins/agents/wide.md":   inprocAgent("wide", "MARK-WIDE", ""),
		".reins/agents/narrow.md": inprocAgent("narrow", "MARK-NARROW", "read, write, bash"),
	})
	s := f.sessionWith(t, SessionOptions{Tools: []string{"read", "grep", "subagent"}})
	if res := s.Run(context.Background(), "delegate-now"); res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn %+v", res)
	}
	for _, c := range []struct {
		marker string
		want   []string
	}{
		{"MARK-WIDE", []string{"grep", "read", "subagent", "subagent_output", "worktree"}}, // subagent implies subagent_output and worktree
		{"MARK-NARROW", []string{"read"}},
	} {
		reqs := f.requestsWith(t, c.marker)
		if len(reqs) != 1 {
			t.Fatalf("%s: %d child requests", c.marker, len(reqs))
		}
		var got []string
		for _, tl := range reqs[0].Tools {
			got = append(got, tl.Function.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s child tools %v, want %v", c.marker, got, c.want)
		}
	}
}

// A child that keeps calling tools stops after the parent's max steps;
// its requests carry the parent's max tokens.
func TestInProcessChildGetsTheParentsLimits(t *testing.T) {
	f := newFixture(t, `
replies:
  - match: MARK-LOOP
    repeat: true
    toolCalls:
      - {name: ls, arguments: {}}
  - match: delegate-now
    toolCalls:
      - {id: a, name: subagent, arguments: {description: loop forever, agent: looper, prompt: "CHILD-TASK loop"}}
fallback:
  text: parent done
`, map[string]string{".reins/agents/looper.md": inprocAgent("looper", "MARK-LOOP", "")})
	s := f.sessionWith(t, SessionOptions{MaxSteps: 3, MaxTokens: 777})
	if res := s.Run(context.Background(), "delegate-now"); res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn %+v", res)
	}
	reqs := f.requestsWith(t, "MARK-LOOP")
	if len(reqs) != 3 {
		t.Errorf("the child made %d model requests, want 3 (max steps 3)", len(reqs))
	}
	for i, r := range reqs {
		if r.MaxTokens != 777 {
			t.Errorf("child request %d: max_tokens %d, want 777", i, r.MaxTokens)
		}
	}
	s.Log.Flush()
	ends := testutil.Decoded[session.SubagentEnd](t, loadEvents(t, s.Log.Path()), session.TypeSubagentEnd)
	if len(ends) != 1 || ends[0].StopReason != "error" || !strings.Contains(ends[0].Diagnostic, "MAX_STEPS") {
		t.Errorf("subagent end %+v, want the child's max-steps error", ends)
	}
}

// The manager hands every provider the parent's tools, limits and mode.
func TestManagerRequestCarriesTheParentsRights(t *testing.T) {
	f := newFixture(t, "replies: []\n", map[string]string{})
	s := f.sessionWith(t, SessionOptions{Tools: []string{"read", "grep", "subagent"}, MaxSteps: 4, MaxTokens: 99, Permission: tool.ReadOnly})
	m := s.Subagents
	if !slices.Equal(m.ToolNames, []string{"grep", "read", "subagent", "subagent_output", "worktree"}) || m.MaxSteps != 4 || m.MaxTokens != 99 || m.Permission != tool.ReadOnly {
		t.Errorf("manager tools %v steps %d tokens %d mode %s", m.ToolNames, m.MaxSteps, m.MaxTokens, m.Permission)
	}
}
