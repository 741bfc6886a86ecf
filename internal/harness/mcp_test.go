package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// mcpConfig is a .reins/config.yaml naming the everything server (and,
// when extra is set, more servers), every process marked for the orphan
// check.
func mcpConfig(t *testing.T, extra string) string {
	nm := testutil.Peers(t)
	k, v, _ := strings.Cut(testutil.MarkChildren(t), "=")
	entry := filepath.Join(nm, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	return fmt.Sprintf("mcpServers:\n  everything: {command: node, args: [%q, stdio], env: {%s: %q}}\n%s", entry, k, v, extra)
}

// allToolResults are the tool results of every session of the harness,
// children included.
func allToolResults(t *testing.T, h *Harness) []session.ToolResult {
	t.Helper()
	var out []session.ToolResult
	filepath.WalkDir(h.SessionsDir(), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == session.FileName {
			out = append(out, testutil.Decoded[session.ToolResult](t, loadEvents(t, p), session.TypeToolResult)...)
		}
		return nil
	})
	return out
}

func resultFor(rs []session.ToolResult, id string) (session.ToolResult, bool) {
	for _, r := range rs {
		if r.CallID == id {
			return r, true
		}
	}
	return session.ToolResult{}, false
}

// offeredTools are the tool names of a chat or Responses request.
func offeredTools(t *testing.T, body []byte) []string {
	var req struct {
		Tools []struct {
			Name     string
			Function struct{ Name string }
		}
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range req.Tools {
		out = append(out, tl.Function.Name+tl.Name)
	}
	return out
}

const mcpScript = `
replies:
  - match: PARENT-ECHO
    toolCalls:
      - {id: call_p, name: mcp__everything__echo, arguments: {message: PING-1}}
  - match: "Echo: PING-1"
    text: parent saw the echo
  - match: DELEGATE-MCP
    toolCalls:
      - {id: call_d1, name: subagent, arguments: {description: echo, agent: mcpuser, prompt: "CHILD-ECHO go"}}
  - match: CHILD-ECHO
    toolCalls:
      - {id: call_c1, name: mcp__everything__echo, arguments: {message: PING-2}}
  - match: "Echo: PING-2"
    text: child echoed
  - match: child echoed
    text: parent done
  - match: DELEGATE-PLAIN
    toolCalls:
      - {id: call_d2, name: subagent, arguments: {description: echo, agent: plain, prompt: "PLAIN-ECHO go"}}
  - match: PLAIN-ECHO
    toolCalls:
      - {id: call_c2, name: mcp__everything__echo, arguments: {message: PING-3}}
  - match: unknown tool
    text: plain child was refused
  - match: plain child was refused
    text: parent done
`

// Acceptance: a scripted model calls mcp__everything__echo on a real
// server; an in-process child whose agent file names the tool calls it
// too; a child whose agent file does not name it cannot.
func TestMCPEchoParentAndChildren(t *testing.T) {
	f := newFixture(t, mcpScript, map[string]string{
		".reins/config.yaml":       mcpConfig(t, ""),
		".reins/agents/mcpuser.md": "---\nname: mcpuser\ndescription: uses echo\ntools: [read, mcp__everything__echo]\n---\nCHILD agent\n",
		".reins/agents/plain.md":   "---\nname: plain\ndescription: no mcp\n---\nPLAIN agent\n",
	})
	if st, _ := f.h.MCP.Status("everything"); st != "not started" {
		t.Fatalf("the server started before any session: %s", st)
	}
	s := f.session(t)
	ctx := context.Background()

	if res := s.Run(ctx, "PARENT-ECHO now"); res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn: %+v", res)
	}
	if r, ok := resultFor(allToolResults(t, f.h), "call_p"); !ok || r.Content != "Echo: PING-1" || r.IsError {
		t.Errorf("parent's echo: %+v", r)
	}
	first := string(f.srv.Requests()[0].Body)
	if !strings.Contains(first, `"mcp__everything__echo"`) || !strings.Contains(first, `"message"`) {
		t.Errorf("the model was not offered mcp__everything__echo with its schema")
	}

	if res := s.Run(ctx, "DELEGATE-MCP now"); res.Reason != session.ReasonCompleted {
		t.Fatalf("delegating to mcpuser: %+v", res)
	}
	if r, ok := resultFor(allToolResults(t, f.h), "call_c1"); !ok || r.Content != "Echo: PING-2" || r.IsError {
		t.Errorf("mcpuser's echo: %+v", r)
	}

	if res := s.Run(ctx, "DELEGATE-PLAIN now"); res.Reason != session.ReasonCompleted {
		t.Fatalf("delegating to plain: %+v", res)
	}
	if r, ok := resultFor(allToolResults(t, f.h), "call_c2"); !ok || !r.IsError || !strings.Contains(r.Content, "unknown tool") {
		t.Errorf("plain's echo: %+v, want an unknown-tool error", r)
	}
	// What each child was offered: mcpuser the one tool it names, plain none.
	for _, rq := range f.srv.Requests() {
		body := string(rq.Body)
		offered := strings.Join(offeredTools(t, rq.Body), " ")
		switch {
		case strings.Contains(body, "CHILD agent"):
			if offered != "mcp__everything__echo read" {
				t.Errorf("mcpuser was offered %s", offered)
			}
		case strings.Contains(body, "PLAIN agent"):
			if strings.Contains(offered, "mcp__") {
				t.Errorf("plain was offered %s", offered)
			}
		}
	}
}

// Sessions' MCP tool sets (mcpRule): a child naming a whole server gets
// all its tools, an allowlist without MCP names gets none, and a child
// never gets what its parent may not have.
func TestMCPRule(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    SessionOptions
		tool string
		want bool
	}{
		{"top level, no allowlist", SessionOptions{}, "mcp__a__x", true},
		{"top level, allowlist without it", SessionOptions{Tools: []string{"read"}}, "mcp__a__x", false},
		{"top level, allowlist naming it", SessionOptions{Tools: []string{"mcp__a__x"}}, "mcp__a__x", true},
		{"top level, agent naming the server", SessionOptions{Tools: []string{"read"}, MCPServers: []string{"a"}}, "mcp__a__y", true},
		{"child, nothing named", SessionOptions{Parent: "p"}, "mcp__a__x", false},
		{"child naming the tool", SessionOptions{Parent: "p", Tools: []string{"mcp__a__x"}}, "mcp__a__x", true},
		{"child naming the server", SessionOptions{Parent: "p", MCPServers: []string{"a"}}, "mcp__a__z", true},
		{"child naming another server", SessionOptions{Parent: "p", MCPServers: []string{"b"}}, "mcp__a__z", false},
		{"child within a parent that lacks it", SessionOptions{Parent: "p", MCPServers: []string{"a"}, mcpWithin: mcpRule(SessionOptions{Tools: []string{"read"}})}, "mcp__a__z", false},
		{"not an MCP name", SessionOptions{}, "read", false},
	} {
		if got := mcpRule(tc.o)(tc.tool); got != tc.want {
			t.Errorf("%s: %s allowed = %v, want %v", tc.name, tc.tool, got, tc.want)
		}
	}
}

const hostileScript = `
replies:
  - match: CALL-CRASHY
    toolCalls:
      - {id: call_crash, name: mcp__crashy__poke, arguments: {}}
  - match: has stopped
    text: crashy is gone
  - match: CALL-MUTE
    toolCalls:
      - {id: call_mute, name: mcp__mute__poke, arguments: {}}
  - match: did not finish starting
    text: mute never started
  - match: CALL-ECHO
    toolCalls:
      - {id: call_echo, name: mcp__everything__echo, arguments: {message: still}}
  - match: "Echo: still"
    text: the session goes on
`

// Acceptance: a server that crashes on a call and one that never answers
// initialize give the model fixed texts, the session goes on, no process
// is left behind, and nothing the servers wrote reaches the model.
func TestMCPHostileServers(t *testing.T) {
	const canary = "SERVER-WROTE-THIS-7f3a"
	script, err := filepath.Abs(filepath.Join("..", "mcp", "testdata", "hostile.js"))
	if err != nil {
		t.Fatal(err)
	}
	k, v, _ := strings.Cut(testutil.MarkChildren(t), "=")
	// The start bound must let crashy and everything start and make mute
	// time out. How long a node server takes to start is the machine's
	// business: when a server that answers did not start in time, the
	// whole session is tried again with twice the bound.
	for start := 2 * time.Second; ; start *= 2 {
		f, rs, turns := hostileRun(t, canary, script, k, v, start)
		crash, _ := resultFor(rs, "call_crash")
		echo, _ := resultFor(rs, "call_echo")
		if slow := "did not finish starting"; strings.Contains(crash.Content, slow) || strings.Contains(echo.Content, slow) {
			f.h.Close()
			if start > time.Minute {
				t.Fatalf("the servers that answer did not start within %s", start)
			}
			t.Logf("start bound %s: a server that answers did not start in time on this machine (crashy: %q; everything: %q); again with %s", start, crash.Content, echo.Content, 2*start)
			continue
		}
		for prompt, res := range turns {
			if res.Reason != session.ReasonCompleted {
				t.Errorf("%s: %+v", prompt, res)
			}
		}
		if !crash.IsError || crash.Content != "MCP server crashy has stopped (it exited or its connection broke); its tools are unavailable for the rest of this run" {
			t.Errorf("crashy: %+v", crash)
		}
		if echo.IsError || echo.Content != "Echo: still" {
			t.Errorf("echo after the failures: %+v", echo)
		}
		if r, _ := resultFor(rs, "call_mute"); !r.IsError || r.Content != fmt.Sprintf("MCP server mute did not finish starting within %s; its tools are unavailable (details in the reins host log)", start) {
			t.Errorf("mute: %+v", r)
		}
		hostileChecks(t, f, rs, canary)
		return
	}
}

// hostileRun is one session of TestMCPHostileServers with MCP start bound
// start; it returns its tool results and how each prompt's turn ended (a
// server that did not start in time leaves the mock model without its
// next reply: that turn ends error, and the caller tries again).
func hostileRun(t *testing.T, canary, script, k, v string, start time.Duration) (*fixture, []session.ToolResult, map[string]agent.TurnResult) {
	t.Helper()
	extra := fmt.Sprintf("  crashy: {command: node, args: [%q, crash], env: {%s: %q, REINS_CANARY: %s}}\n"+
		"  mute: {command: node, args: [%q, silent], env: {%s: %q, REINS_CANARY: %s}}\n"+
		"subagents: {startTimeout: %s}\n", script, k, v, canary, script, k, v, canary, start)
	f := newFixture(t, hostileScript, map[string]string{
		".reins/config.yaml":    mcpConfig(t, extra),
		".reins/agents/user.md": "---\nname: user\ndescription: x\ntools: [mcp__mute__poke]\n---\nx\n",
	})
	// The top-level session has every server; mute's tools are unknown,
	// so a session names mcp__mute__poke explicitly to be offered its
	// stand-in.
	m, err := f.h.ResolveModel("openai/test", f.url)
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.h.NewSession(SessionOptions{Model: m, Tools: []string{"mcp__crashy__poke", "mcp__mute__poke", "mcp__everything__echo"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	turns := map[string]agent.TurnResult{}
	for _, prompt := range []string{"CALL-CRASHY", "CALL-MUTE", "CALL-ECHO"} {
		turns[prompt] = s.Run(ctx, prompt)
	}
	s.Close()
	return f, allToolResults(t, f.h), turns
}

// hostileChecks: nothing the servers wrote reached the model or a
// session log.
func hostileChecks(t *testing.T, f *fixture, rs []session.ToolResult, canary string) {
	t.Helper()
	for _, rq := range f.srv.Requests() {
		if strings.Contains(string(rq.Body), canary) || strings.Contains(string(rq.Body), "hostile") {
			t.Fatalf("server-written text reached the model: %.300s", rq.Body)
		}
	}
	f.h.Close()
	testutil.CanaryOnlyInHostLog(t, f.h.Home, canary)
	var sb strings.Builder
	json.NewEncoder(&sb).Encode(rs)
	if strings.Contains(sb.String(), canary) {
		t.Error("the canary is in a session log")
	}
}
