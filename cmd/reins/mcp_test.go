package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/testutil"
)

// `reins mcp list` shows each configured server, where it came from, its
// state and its tools; a project's .mcp.json counts only once the folder
// is trusted.
func TestMCPList(t *testing.T) {
	nm := testutil.Peers(t)
	home := t.TempDir()
	entry := filepath.Join(nm, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	cfg := fmt.Sprintf("mcpServers:\n  everything: {command: node, args: [%q, stdio]}\n  broken: {command: reins-no-such-mcp-server}\n", entry)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	list := func(dir string) (string, string) {
		cmd := reinsCmd(t, home, "mcp", "list")
		if dir != "" {
			cmd.Dir = dir
		}
		var out bytes.Buffer
		cmd.Stdout = &out
		code, stderr := exitCode(t, cmd)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		return out.String(), stderr
	}
	out, _ := list("")
	for _, re := range []string{
		`(?m)^everything +stdio +running +` + regexp.QuoteMeta(filepath.Join(home, "config.yaml")) + `$`,
		`(?m)^  mcp__everything__echo +read-only +Echoes back the input string`,
		`(?m)^  mcp__everything__toggle-simulated-logging +workspace-write `,
		`(?m)^broken +stdio +failed: MCP server broken could not be started; its tools are unavailable`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", re, out)
		}
	}

	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(`{"mcpServers": {"fromjson": {"command": "reins-no-such-mcp-server"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr := list(ws)
	if strings.Contains(out, "fromjson") || !strings.Contains(stderr, "untrusted") || !strings.Contains(stderr, ".mcp.json") {
		t.Errorf("untrusted .mcp.json: stdout\n%s\nstderr\n%s", out, stderr)
	}
	testutil.Trust(t, home, ws)
	if out, _ := list(ws); !regexp.MustCompile(`(?m)^fromjson +stdio +failed: .* ` + regexp.QuoteMeta(filepath.Join(ws, ".mcp.json")) + `$`).MatchString(out) {
		t.Errorf("trusted .mcp.json:\n%s", out)
	}
}

// A reins killed with SIGKILL while an MCP server is starting leaves no
// process behind: the server ran under the supervisor, which notices its
// parent is gone and kills what it started (the orphan check of
// MarkChildren, in reinsCmd, fails the test otherwise).
func TestMCPServerDiesWithReins(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		testutil.MissingPeer(t, "node not found")
	}
	home := t.TempDir()
	script, err := filepath.Abs(filepath.Join("..", "..", "internal", "mcp", "testdata", "hostile.js"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := reinsCmd(t, home, "mcp", "list")
	// In the workspace: the server may write nowhere else.
	ready := filepath.Join(cmd.Dir, "ready")
	cfg := fmt.Sprintf("mcpServers:\n  mute: {command: node, args: [%q, silent], env: {HOSTILE_READY: %q}}\n", script, ready)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("the MCP server never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}
