package mcpserve

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestElicitTwiceInOneCall: a child that asks twice in one foreground
// call gets both questions put (two input-required rounds of one call,
// the Go SDK client's retries), each answered, and the call's one child
// goes on to its answer; the server is race-clean (go test -race).
func TestElicitTwiceInOneCall(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	var mu sync.Mutex
	var asked []string
	m := newInMemory(t, context.Background(), dir, home, `replies:
  - {match: GIT-TWICE, toolCalls: [{name: bash, arguments: {command: "echo a > .git/a && echo AONE"}}]}
  - {match: AONE, toolCalls: [{name: bash, arguments: {command: "echo b > .git/b && echo BTWO"}}]}
  - {match: BTWO, text: both written}
fallback: {echo: true, text: 'mock: '}
`, 0, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, nil
		},
	})
	defer m.h.Close()
	cs, served := m.cs, m.served
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"prompt": "GIT-TWICE"}})
	if err != nil {
		t.Fatal(err)
	}
	var r Result
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &r)
	if res.IsError || r.Output != "both written" {
		t.Errorf("result: isError %v %+v", res.IsError, r)
	}
	mu.Lock()
	if len(asked) != 2 || !strings.Contains(asked[0], "echo a > .git/a") || !strings.Contains(asked[1], "echo b > .git/b") {
		t.Errorf("questions: %q", asked)
	}
	mu.Unlock()
	for _, f := range []string{"a", "b"} {
		if _, err := os.Stat(filepath.Join(dir, ".git", f)); err != nil {
			t.Errorf(".git/%s: %v", f, err)
		}
	}
	cs.Close()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}
