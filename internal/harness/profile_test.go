package harness

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tool"
)

// requestTools returns the tool names of a recorded request body, on
// either wire (OpenAI chat: tools[].function.name; Responses and
// Anthropic: tools[].name).
func requestTools(t *testing.T, body []byte) []string {
	t.Helper()
	var b struct {
		Tools []struct {
			Name     string `json:"name"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range b.Tools {
		n := x.Name
		if n == "" {
			n = x.Function.Name
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// TestToolProfileInRequest: an OpenAI model is offered apply_patch and no
// edit/multi_edit/write (Codex's shape); an Anthropic model the Claude Code
// shapes and no apply_patch; an agent's `tools: profile minimal` overrides
// the model's profile — each seen in the request's tool list at the mock.
func TestToolProfileInRequest(t *testing.T) {
	tests := []struct {
		model   string
		profile tool.Profile
		want    []string
		absent  []string
	}{
		{"openai/gpt-5", "", []string{"apply_patch", "bash", "glob", "grep", "ls", "read"}, []string{"edit", "multi_edit", "write"}},
		// A model a local OpenAI-compatible server names: not OpenAI's
		// own, so the default shapes.
		{"openai/qwen2.5-coder", "", []string{"bash", "edit", "read", "write"}, []string{"apply_patch"}},
		{"anthropic/claude-sonnet-4-5", "", []string{"bash", "edit", "glob", "grep", "ls", "multi_edit", "read", "write"}, []string{"apply_patch"}},
		{"anthropic/claude-sonnet-4-5", tool.ProfileMinimal, []string{"bash", "edit", "read", "write"}, []string{"apply_patch", "multi_edit", "grep"}},
	}
	// An explicit allowlist names its tools itself: edit stays for an
	// OpenAI model when asked for.
	t.Run("allowlist wins", func(t *testing.T) {
		f := newFixture(t, "replies:\n  - {match: HELLO, text: hi}\n", map[string]string{})
		m, err := f.h.ResolveModel("openai/gpt-5", f.url)
		if err != nil {
			t.Fatal(err)
		}
		s, err := f.h.NewSession(SessionOptions{Model: m, Tools: []string{"read", "edit"}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		s.Run(context.Background(), "HELLO")
		if got := requestTools(t, f.srv.Requests()[0].Body); strings.Join(got, ",") != "edit,read" {
			t.Errorf("tools %v, want [edit read]", got)
		}
	})
	for _, tt := range tests {
		t.Run(tt.model+"/"+string(tt.profile), func(t *testing.T) {
			f := newFixture(t, "replies:\n  - {match: HELLO, text: hi}\n", map[string]string{})
			m, err := f.h.ResolveModel(tt.model, f.url)
			if err != nil {
				t.Fatal(err)
			}
			s, err := f.h.NewSession(SessionOptions{Model: m, ToolProfile: tt.profile})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if res := s.Run(context.Background(), "HELLO"); res.Reason != session.ReasonCompleted {
				t.Fatalf("turn %+v", res)
			}
			reqs := f.srv.Requests()
			if len(reqs) == 0 {
				t.Fatal("no request reached the mock")
			}
			got := requestTools(t, reqs[0].Body)
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("tools %v lack %s", got, w)
				}
			}
			for _, a := range tt.absent {
				if slices.Contains(got, a) {
					t.Errorf("tools %v offer %s", got, a)
				}
			}
			t.Logf("%s (%s): %s", tt.model, reqs[0].Wire, strings.Join(got, ","))
		})
	}
}
