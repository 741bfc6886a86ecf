package reinschild_test

import (
	"cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
	"github.com/reinsdev/reins/internal/tool"
)

// Delegation never widens rights (issue 12, finding 5): a reins child —
// the real runtime, this test binary serving `reins sdk` — gets the
// intersection of its parent's tools and its agent file's, at most the
// parent's permission mode, and the parent's step and token limits. What
// the child got is read where it cannot lie: the model requests the
// scripted server received from it.

// reinsAgent is a reins-provider agent file whose system prompt carries
// marker, so the script (and the test) can tell its requests apart.
func reinsAgent(name, marker, tools string) string {
	s := "---\nname: " + name + "\ndescription: a reins child\nprovider: reins\n"
	if tools != "" {
		s += "tools: " + tools + "\n"
	}
	return s + `env:
  REINS_TEST_AS_SDK: "1"
  REINS_HOME: $HOME
  REINS_TEST_MARK: $MARK
---
` + marker + "\n"
}

// wireRequest is what a test reads of an OpenAI request body, in either
// wire: Responses (the openai default: tools {type, name},
// max_output_tokens) or chat completions (tools {type, function: {name}},
// max_tokens).
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

func (w wireRequest) toolNames() []string {
	var out []string
	for _, t := range w.Tools {
		out = append(out, cmp.Or(t.Name, t.Function.Name))
	}
	slices.Sort(out)
	return out
}

// maxTokens is the request's output-token cap, in either wire.
func (w wireRequest) maxTokens() int { return cmp.Or(w.MaxOutputTokens, w.MaxTokens) }

// requestsWith decodes the recorded requests whose system prompt holds
// marker.
func requestsWith(t *testing.T, srv *mock.Server, marker string) []wireRequest {
	t.Helper()
	var out []wireRequest
	for _, r := range srv.Requests() {
		if !strings.Contains(r.System, marker) {
			continue
		}
		var w wireRequest
		if err := json.Unmarshal(r.Body, &w); err != nil {
			t.Fatal(err)
		}
		out = append(out, w)
	}
	return out
}

func TestReinsChildToolsAreTheIntersection(t *testing.T) {
	p := newParentOpts(t, `
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
		// No tools in the agent file: the parent's.
		"wide": reinsAgent("wide", "MARK-WIDE", ""),
		// write and bash are more than the parent has: dropped.
		"narrow": reinsAgent("narrow", "MARK-NARROW", "read, write, bash"),
	}, harness.SessionOptions{Tools: []string{"read", "grep", "subagent"}})
	if res := p.s.Run(context.Background(), "delegate-now"); res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn %+v", res)
	}
	for _, c := range []struct {
		marker string
		want   []string
	}{
		{"MARK-WIDE", []string{"grep", "read", "subagent", "subagent_output", "worktree"}}, // subagent implies subagent_output and worktree
		{"MARK-NARROW", []string{"read"}},
	} {
		reqs := requestsWith(t, p.srv, c.marker)
		if len(reqs) != 1 {
			t.Fatalf("%s: %d child requests", c.marker, len(reqs))
		}
		if got := reqs[0].toolNames(); !slices.Equal(got, c.want) {
			t.Errorf("%s child tools %v, want %v", c.marker, got, c.want)
		}
	}
}

// A child that keeps calling tools stops after the parent's --max-steps,
// and its model requests carry the parent's --max-tokens.
func TestReinsChildGetsTheParentsLimits(t *testing.T) {
	p := newParentOpts(t, `
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
`, map[string]string{"looper": reinsAgent("looper", "MARK-LOOP", "")},
		harness.SessionOptions{MaxSteps: 3, MaxTokens: 777})
	if res := p.s.Run(context.Background(), "delegate-now"); res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn %+v", res)
	}
	reqs := requestsWith(t, p.srv, "MARK-LOOP")
	if len(reqs) != 3 {
		t.Errorf("the child made %d model requests, want 3 (--max-steps 3)", len(reqs))
	}
	for i, r := range reqs {
		if r.maxTokens() != 777 {
			t.Errorf("child request %d: max output tokens %d, want 777", i, r.maxTokens())
		}
	}
	ends := testutil.Decoded[session.SubagentEnd](t, p.events(t), session.TypeSubagentEnd)
	if len(ends) != 1 || ends[0].StopReason != "error" {
		t.Errorf("subagent end %+v, want the child's max-steps error", ends)
	}
}

// A read-only parent's reins child refuses write, and nothing is written.
func TestReinsChildOfReadOnlyParentRefusesWrite(t *testing.T) {
	p := newParentOpts(t, `
replies:
  - match: MARK-WRITER
    toolCalls:
      - {id: w1, name: write, arguments: {path: escaped.txt, content: "x"}}
  - match: not permitted
    text: the child was refused
  - match: delegate-now
    toolCalls:
      - {id: a, name: subagent, arguments: {description: try to write, agent: writer, prompt: "CHILD-TASK write"}}
fallback:
  text: parent done
`, map[string]string{"writer": reinsAgent("writer", "MARK-WRITER", "read, write")},
		harness.SessionOptions{Permission: tool.ReadOnly})
	if res := p.s.Run(context.Background(), "delegate-now"); res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn %+v", res)
	}
	if _, err := os.Stat(filepath.Join(p.cwd, "escaped.txt")); err == nil {
		t.Fatal("a read-only parent's child wrote a file")
	}
	starts := testutil.Decoded[session.SubagentStart](t, p.events(t), session.TypeSubagentStart)
	if len(starts) != 1 {
		t.Fatalf("subagent starts %+v", starts)
	}
	child, err := session.Load(filepath.Join(p.home, "sessions", starts[0].ChildSession, session.FileName))
	if err != nil {
		t.Fatal(err)
	}
	results := testutil.Decoded[session.ToolResult](t, child.Events, session.TypeToolResult)
	if len(results) != 1 || !results[0].IsError || !strings.Contains(results[0].Content, "not permitted in read-only mode") {
		t.Errorf("child tool results %+v, want write refused in read-only mode", results)
	}
}
