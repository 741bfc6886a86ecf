package sdkserver_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/sdkserver"
	"github.com/reinsdev/reins/sdk"
)

// initialize's tools, permission, maxSteps and maxTokens bind every
// session of the runtime: what a reins parent hands its reins child
// (delegation never widens rights). The model requests show the tools and
// the limits; the workspace shows the mode.
func TestInitializeRights(t *testing.T) {
	url, srv := mockServer(t, `
replies:
  - repeat: true
    toolCalls:
      - {name: write, arguments: {path: out.txt, content: x}}
`)
	cwd, home := workspace(t)
	// The runtime's own defaults are wider: initialize narrows them.
	c := serve(t, sdkserver.Config{Home: home, Cwd: cwd, Model: "openai/test", BaseURL: url, MaxSteps: 50, Permission: "full-access", Getenv: func(string) string { return "" }})
	id := c.request(sdk.MethodInitialize, sdk.InitializeParams{
		ProtocolVersion: 1, Tools: []string{"read", "write"}, Permission: "read-only", MaxSteps: 3, MaxTokens: 321,
	})
	if f := last(c.until(isResponse(id))); f["result"] == nil {
		t.Fatalf("initialize: %v", f)
	}
	_, msg := c.prompt("", "loop")
	c.until(isIdle(msg))
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Errorf("%d model requests, want 3 (maxSteps 3)", len(reqs))
	}
	for i, r := range reqs {
		// openai at the mock's URL (not OpenAI's) speaks chat
		// completions: max_tokens, tools[].function.name.
		var w struct {
			MaxTokens int `json:"max_tokens"`
			Tools     []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(r.Body, &w); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range w.Tools {
			names = append(names, tl.Function.Name)
		}
		slices.Sort(names)
		if w.MaxTokens != 321 || !slices.Equal(names, []string{"read", "write"}) {
			t.Errorf("request %d: max_tokens %d tools %v", i, w.MaxTokens, names)
		}
	}
	if _, err := os.Stat(filepath.Join(cwd, "out.txt")); err == nil {
		t.Error("a read-only runtime wrote a file")
	}
	var refused int
	for _, f := range c.seen {
		if ev, _ := params(f)["event"].(map[string]any); ev["type"] == "tool/result" {
			b, _ := json.Marshal(ev["data"])
			if strings.Contains(string(b), "not permitted in read-only mode") {
				refused++
			}
		}
	}
	if refused == 0 {
		t.Error("no write was refused in read-only mode")
	}
}

func TestInitializeRejectsNegativeLimits(t *testing.T) {
	c, _ := newConn(t, "replies: []\n")
	id := c.request(sdk.MethodInitialize, sdk.InitializeParams{ProtocolVersion: 1, MaxSteps: -1})
	if f := last(c.until(isResponse(id))); errCode(f) != sdk.CodeInvalidParams {
		t.Errorf("initialize with maxSteps -1: %v", f)
	}
}
