package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/testutil"
	"github.com/reinsdev/reins/internal/tool"
)

// TestMCPServerPolicyFromConfig (issue 26): an MCP server runs under the
// policy of the configuration that declared it (workspace-write in the
// workspace, the config's sandbox), not under the mode of the session that
// happened to start it. A full-access session first does not leave the
// server unconfined for everyone after it; a read-only session first does
// not leave it unable to write for the workspace-write sessions after it.
// The server is the reference filesystem server given the whole disk, so
// only the sandbox holds it.
func TestMCPServerPolicyFromConfig(t *testing.T) {
	nm := testutil.Peers(t)
	entry := filepath.Join(nm, "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	k, v, _ := strings.Cut(testutil.MarkChildren(t), "=")
	config := fmt.Sprintf("mcpServers:\n  fs: {command: node, args: [%q, /], env: {%s: %q}}\n", entry, k, v)
	write := func(t *testing.T, s *Session, path string) tool.Result {
		t.Helper()
		wt, ok := s.Agent.Tools.Get("mcp__fs__write_file")
		if !ok {
			t.Fatalf("no mcp__fs__write_file: %v", s.Agent.Tools.Names())
		}
		args, _ := json.Marshal(map[string]string{"path": path, "content": "x"})
		return wt.Run(context.Background(), s.Agent.Env, args)
	}
	open := func(t *testing.T, f *fixture, perm tool.Permission) *Session {
		t.Helper()
		m, err := f.h.ResolveModel("openai/test", f.url)
		if err != nil {
			t.Fatal(err)
		}
		s, err := f.h.NewSession(SessionOptions{Model: m, Permission: perm})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}

	t.Run("full-access first", func(t *testing.T) {
		f := newFixture(t, "replies: []\n", map[string]string{".reins/config.yaml": config})
		first := open(t, f, tool.FullAccess)
		outside := filepath.Join(t.TempDir(), "planted.txt")
		res := write(t, first, outside)
		if _, err := os.Stat(outside); err == nil {
			t.Errorf("the server, started by a full-access session, wrote outside the workspace: %+v", res)
		}
		later := open(t, f, tool.ReadOnly)
		write(t, later, outside)
		if _, err := os.Stat(outside); err == nil {
			t.Error("the server wrote outside the workspace for a read-only session")
		}
	})
	t.Run("read-only first", func(t *testing.T) {
		f := newFixture(t, "replies: []\n", map[string]string{".reins/config.yaml": config})
		open(t, f, tool.ReadOnly)
		later := open(t, f, tool.WorkspaceWrite)
		inside := filepath.Join(f.h.Cwd, "made-by-the-server.txt")
		if res := write(t, later, inside); res.IsError {
			t.Errorf("the server cannot write in the workspace for a workspace-write session: %+v", res)
		}
		if b, err := os.ReadFile(inside); err != nil || string(b) != "x" {
			t.Errorf("inside: %q, %v", b, err)
		}
	})
}
