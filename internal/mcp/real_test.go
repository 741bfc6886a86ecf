package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/mcpspec"
	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/testutil"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/proc"
)

// realServer is a server run by node from the npm test peers.
func realServer(t *testing.T, name, pkg string, args ...string) mcpspec.Server {
	nm := testutil.Peers(t)
	entry := filepath.Join(nm, "@modelcontextprotocol", pkg, "dist", "index.js")
	return mcpspec.Server{Name: name, Command: "node", Args: append([]string{entry}, args...), Source: "test"}
}

// stdioManager runs servers confined to a fresh workspace, every process
// marked so that none may outlive the test.
func stdioManager(t *testing.T, opts Options, servers ...mcpspec.Server) (*Manager, sandbox.Policy, *logSink) {
	mark := testutil.MarkChildren(t)
	ws := t.TempDir()
	log := &logSink{}
	opts.Logf = log.logf
	opts.Dir = ws
	opts.Environ = func() []string { return append(os.Environ(), mark) }
	if opts.Ladder == (proc.Ladder{}) {
		opts.Ladder = proc.Ladder{Grace: time.Second, Term: time.Second, Reap: 5 * time.Second}
	}
	pol := ServerPolicy(sandbox.Policy{}, ws)
	if opts.Policy == nil {
		opts.Policy = func() sandbox.Policy { return pol }
	}
	m := NewManager(servers, opts)
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return m, pol, log
}

// The reference everything server over stdio: echo round-trips, an
// invalid call is an error result, and a long-running call cancelled
// mid-way returns the fixed text while the server goes on serving.
func TestEverythingStdio(t *testing.T) {
	m, _, log := stdioManager(t, Options{}, realServer(t, "everything", "server-everything", "stdio"))
	ts, err := m.Tools("everything")
	if err != nil {
		t.Fatal(err)
	}
	tools := byName(ts)
	echo := tools["mcp__everything__echo"]
	long := tools["mcp__everything__trigger-long-running-operation"]
	if echo == nil || long == nil {
		t.Fatalf("tools: %v", keys(tools))
	}
	if echo.Needs() != tool.ReadOnly {
		t.Errorf("echo needs %s; it is annotated read-only", echo.Needs())
	}
	env := &tool.Env{Permission: tool.ReadOnly}
	ctx := context.Background()
	if res := echo.Run(ctx, env, json.RawMessage(`{"message":"hello mcp"}`)); res.IsError || res.Content != "Echo: hello mcp" {
		t.Errorf("echo: %+v", res)
	}
	if res := echo.Run(ctx, env, json.RawMessage(`{"message":5}`)); !res.IsError {
		t.Errorf("echo with a number: %+v, want an error result", res)
	}
	if res := tools["mcp__everything__get-structured-content"].Run(ctx, env, json.RawMessage(`{"location":"New York"}`)); res.IsError || !strings.Contains(res.Content, "temperature") {
		t.Errorf("structured content: %+v", res)
	}
	if res := tools["mcp__everything__get-tiny-image"].Run(ctx, env, nil); res.IsError || !strings.Contains(res.Content, "[image: image/png, ") {
		t.Errorf("image: %+v\n%s", res, log)
	}

	cctx, cancel := context.WithCancel(ctx)
	done := make(chan tool.Result)
	go func() { done <- long.Run(cctx, env, json.RawMessage(`{"duration":600,"steps":600}`)) }()
	time.Sleep(500 * time.Millisecond) // let the call reach the server; the check does not depend on it
	cancel()
	select {
	case res := <-done:
		if !res.IsError || res.Content != "the call to MCP server everything was cancelled" {
			t.Errorf("cancelled call: %+v", res)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("a cancelled long-running call did not return")
	}
	if res := echo.Run(ctx, env, json.RawMessage(`{"message":"still here"}`)); res.Content != "Echo: still here" {
		t.Errorf("echo after the cancel: %+v", res)
	}
}

// The everything server over streamable HTTP, with a header.
func TestEverythingHTTP(t *testing.T) {
	srv := realServer(t, "x", "server-everything", "streamableHttp")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	mark := testutil.MarkChildren(t)
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Env = append(os.Environ(), mark, fmt.Sprintf("PORT=%d", port))
	stderr, _ := cmd.StderrPipe()
	pr, err := proc.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Dispose(proc.Ladder{Grace: 0, Term: time.Second, Reap: 5 * time.Second}) })
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening") {
				close(ready)
				break
			}
		}
		for sc.Scan() {
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatal("the HTTP server did not start")
	}
	log := &logSink{}
	m := NewManager([]mcpspec.Server{{Name: "web", URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), Headers: map[string]string{"X-Test": "1"}}}, Options{Logf: log.logf})
	t.Cleanup(func() { m.Close() })
	ts, err := m.Tools("web")
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	res := byName(ts)["mcp__web__echo"].Run(context.Background(), &tool.Env{}, json.RawMessage(`{"message":"over http"}`))
	if res.IsError || res.Content != "Echo: over http" {
		t.Errorf("echo over http: %+v", res)
	}
}

// The filesystem server runs confined to the workspace: told it may use
// the whole disk, it still cannot write outside the workspace, because
// the sandbox (workspace-write) holds it, not its own checks.
func TestFilesystemConfined(t *testing.T) {
	outside := t.TempDir()
	m, pol, _ := stdioManager(t, Options{}, realServer(t, "fs", "server-filesystem", "/"))
	ts, err := m.Tools("fs")
	if err != nil {
		t.Fatal(err)
	}
	tools := byName(ts)
	write, read := tools["mcp__fs__write_file"], tools["mcp__fs__read_text_file"]
	if write == nil || read == nil {
		t.Fatalf("tools: %v", keys(tools))
	}
	if write.Needs() != tool.WorkspaceWrite || read.Needs() != tool.ReadOnly {
		t.Errorf("needs: write %s, read %s", write.Needs(), read.Needs())
	}
	env := &tool.Env{Permission: tool.WorkspaceWrite}
	ctx := context.Background()
	inside := filepath.Join(pol.Workspace, "in.txt")
	if res := write.Run(ctx, env, args(t, map[string]string{"path": inside, "content": "in"})); res.IsError {
		t.Fatalf("write inside: %+v", res)
	}
	if b, err := os.ReadFile(inside); err != nil || string(b) != "in" {
		t.Errorf("inside file: %q, %v", b, err)
	}
	out := filepath.Join(outside, "out.txt")
	if res := write.Run(ctx, env, args(t, map[string]string{"path": out, "content": "out"})); !res.IsError {
		t.Errorf("write outside the workspace: %+v, want an error", res)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the server wrote outside the workspace")
	}
	if res := read.Run(ctx, env, args(t, map[string]string{"path": inside})); res.IsError || res.Content != "in" {
		t.Errorf("read: %+v", res)
	}
}

func args(t *testing.T, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func keys(m map[string]*Tool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
