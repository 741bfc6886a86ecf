package acpchild

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/mcpspec"
	"github.com/reinsdev/reins/internal/outcome"
)

// An acp child receives in session/new the MCP servers its agent file
// names: stdio ones always, http ones only when it takes them; a name no
// server has is left out and logged.
func TestMCPServersPassed(t *testing.T) {
	servers := []mcpspec.Server{
		{Name: "files", Command: "node", Args: []string{"fs.js", "/w"}, Env: map[string]string{"B": "2", "A": "1"}},
		{Name: "web", URL: "https://mcp.example/mcp", Headers: map[string]string{"Authorization": "Bearer t"}},
		{Name: "unnamed", Command: "other"},
	}
	for _, tc := range []struct {
		http string
		want string
	}{
		{"", `[{"name":"files","command":"node","args":["fs.js","/w"],"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]}]`},
		{"1", `[{"name":"files","command":"node","args":["fs.js","/w"],"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]},{"type":"http","name":"web","url":"https://mcp.example/mcp","headers":[{"name":"Authorization","value":"Bearer t"}]}]`},
	} {
		f := newFixture(t)
		ag := f.agent("mcp_servers", "", map[string]string{"ACP_MCP_HTTP": tc.http})
		ag.MCPServers = []string{"files", "web", "missing"}
		p := New(Options{Logf: func(format string, args ...any) {
			f.mu.Lock()
			f.log.WriteString(strings.TrimSpace(fmt.Sprintf(format, args...)) + "\n")
			f.mu.Unlock()
		}, Ladder: testLadder, MCPServers: servers})
		r, err := p.Start(context.Background(), f.request(ag, "list"))
		if err != nil {
			t.Fatal(err)
		}
		res := outcome.Settle(r.Wait(context.Background()))
		if err := r.Dispose(); err != nil {
			t.Error(err)
		}
		if res.StopReason != outcome.StopCompleted {
			t.Fatalf("http=%q: %+v", tc.http, res)
		}
		if got := canonical(t, text(res)); got != canonical(t, tc.want) {
			t.Errorf("http=%q: the child got\n%s\nwant\n%s", tc.http, got, canonical(t, tc.want))
		}
		log := f.hostLog()
		if !strings.Contains(log, "MCP server missing is not configured") {
			t.Errorf("host log lacks the unknown name:\n%s", log)
		}
		if tc.http == "" && !strings.Contains(log, "MCP server web is an http server and the child takes none") {
			t.Errorf("host log lacks the skipped http server:\n%s", log)
		}
	}
}

func canonical(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
