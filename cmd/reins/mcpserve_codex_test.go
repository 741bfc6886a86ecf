package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// peerPlatform is the one platform whose binaries testdata/peers installs
// for the peer agents (as in internal/subagent/acpchild's peers_test.go).
const peerPlatform = "linux/amd64"

// codexChildPrompt is what Codex's model asks the reins child; mock/echo
// answers "mock: " and it.
const codexChildPrompt = "REINS-CHILD-PROMPT 7f3a"

// TestMCPServeCodexCaller (issue 52): a real agent as the caller of
// `reins mcp serve`. `reins run` delegates to Codex (codex-acp 0.16.0, its
// linux/x64 binary from testdata/peers) as an ACP child whose agent file
// names the MCP server reins = this reins running `mcp serve -m mock/echo`;
// acpchild passes the server in session/new and Codex starts it itself.
// Codex's model (the mock on the Responses wire) calls the server's run
// tool, which Codex 0.137 (inside codex-acp 0.16.0) offers as the function
// run of the namespace tool mcp__reins; the reins child's answer comes
// back as the tool's output and Codex's final message echoes it into the
// parent's result.
//
// Codex asks session/request_permission before the MCP tool call (an MCP
// tool approval, ACP kind "other"; approval_policy=untrusted): the agent
// file's permission answers it. With allow the call runs; with reject it
// never reaches the server, and Codex tells its model "user cancelled MCP
// tool call" and completes its turn. No process is left either way.
func TestMCPServeCodexCaller(t *testing.T) {
	if pl := runtime.GOOS + "/" + runtime.GOARCH; pl != peerPlatform {
		t.Skipf("the peer agents' binaries in testdata/peers are the %s builds; this is %s (README, \"Run the tests\")", peerPlatform, pl)
	}
	nm := testutil.Peers(t)
	useExtraHelper(t)
	t.Run("allow", func(t *testing.T) {
		c := newCodexCaller(t, nm, "allow")
		res := c.run()
		first := c.codexRequest(0)
		if !hasNamespaceTool(first.Body, "mcp__reins", "run") {
			t.Fatalf("Codex's first model request offers no run in a namespace mcp__reins; its tools: %s", toolNames(first.Body))
		}
		// The tool's output Codex got: the server's structuredContent, a
		// completed run of a reins child with the echo.
		out, ok := c.toolOutput()
		if !ok {
			t.Fatalf("no model request carries the run call's output")
		}
		var sc mcpResult
		if _, js, _ := strings.Cut(out, "\nOutput:\n"); json.Unmarshal([]byte(js), &sc) != nil ||
			sc.StopReason != "completed" || sc.Output != "mock: "+codexChildPrompt || !strings.HasPrefix(sc.Child, "child-") || sc.SessionID == "" {
			t.Fatalf("the run tool's output Codex got: %q", out)
		}
		// That child's session is the server's: it ran in `reins mcp serve`.
		if !c.serverSession(sc.SessionID) {
			t.Errorf("the server's REINS_HOME holds no session %s of an mcp-serve parent", sc.SessionID)
		}
		// Codex's final message (the echo of the tool output) is the
		// subagent result the parent's model read, and so in the parent's
		// answer.
		last, _ := c.parentSrv.Request(1)
		if !strings.HasPrefix(last.Last, "codex heard: ") || !strings.Contains(last.Last, `"output":"mock: `+codexChildPrompt+`"`) {
			t.Errorf("the parent's model read %q", last.Last)
		}
		if res.StopReason != "completed" || !strings.Contains(res.Output, "mock: "+codexChildPrompt) || !strings.Contains(res.Output, sc.Child) {
			t.Errorf("the parent's result: %+v", res)
		}
		c.permission("allowed")
		c.noneLeft()
	})
	t.Run("reject", func(t *testing.T) {
		c := newCodexCaller(t, nm, "reject")
		res := c.run()
		// Rejected: the server never ran a child.
		if c.serverSession("") {
			t.Errorf("the server ran a child though the call was rejected")
		}
		// Codex tells its model the call was cancelled and goes on.
		if out, ok := c.toolOutput(); !ok || !strings.Contains(out, "user cancelled MCP tool call") {
			t.Errorf("the rejected call's output: %q (given: %v)", out, ok)
		}
		if res.StopReason != "completed" || strings.Contains(res.Output, "mock: "+codexChildPrompt) {
			t.Errorf("the parent's result: %+v", res)
		}
		c.permission("rejected")
		c.noneLeft()
	})
}

// codexCaller is one `reins run` whose Codex child calls `reins mcp serve`.
type codexCaller struct {
	t                   *testing.T
	cwd, home, srvHome  string
	mark, markEnv       string
	codexSrv, parentSrv *mock.Server
	parentURL           string
}

func newCodexCaller(t *testing.T, nm, permission string) *codexCaller {
	t.Helper()
	markEnv := testutil.MarkChildren(t)
	c := &codexCaller{t: t, cwd: t.TempDir(), home: t.TempDir(), srvHome: t.TempDir(),
		markEnv: markEnv, mark: strings.TrimPrefix(markEnv, testutil.MarkEnv+"=")}
	// Codex's model: the run tool in the namespace Codex gives the
	// server's tools, then an echo of what the call returned.
	var codexURL string
	codexURL, c.codexSrv = startMock(t, `
replies:
  - match: ASK-REINS
    toolCalls:
      - {id: call_reins, namespace: mcp__reins, name: run, arguments: {prompt: "`+codexChildPrompt+`"}}
fallback: {echo: true, text: "codex heard: "}
`)
	// The parent's model: delegate to codex, then echo its result.
	c.parentURL, c.parentSrv = startMock(t, `
replies:
  - match: delegate
    toolCalls:
      - {id: call_1, name: subagent, arguments: {description: ask codex, agent: codex, prompt: "ASK-REINS: run a reins child"}}
fallback: {echo: true, text: "parent heard: "}
`)

	// The server runs in the Codex child's container, which shows of the
	// host's /tmp only the workspace and the writable folders: the
	// binaries are linked into srvHome, which the agent file makes
	// writable, and so is the server's own REINS_HOME (never the parent's,
	// which no child may write). Codex gives an MCP server only a few
	// variables of its own environment: what reins needs is in the
	// server's env.
	bin := filepath.Join(c.srvHome, "bin")
	reinsBin, extraBin := filepath.Join(bin, "reins"), filepath.Join(bin, cli.ExtraName)
	linkOrCopy(t, os.Args[0], reinsBin)
	linkOrCopy(t, os.Getenv(cli.ExtraEnv), extraBin)
	srvReinsHome := filepath.Join(c.srvHome, "home")
	if err := os.MkdirAll(srvReinsHome, 0o755); err != nil {
		t.Fatal(err)
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	config := "mcpServers:\n  reins:\n    command: " + q(reinsBin) + "\n" +
		"    args: [mcp, serve, -m, mock/echo]\n" +
		"    env:\n" +
		"      REINS_AS_MAIN: \"1\"\n" +
		"      REINS_HOME: " + q(srvReinsHome) + "\n" +
		"      " + cli.ExtraEnv + ": " + q(extraBin) + "\n" +
		"      " + testutil.MarkEnv + ": " + q(c.mark) + "\n" +
		"      GORACE: atexit_sleep_ms=0\n"
	// Codex as in acpchild's TestPeerAgents: the mock as its provider,
	// approval_policy=untrusted so that it asks before a tool call.
	codexArgs := []string{
		"-c", "model_provider=mock",
		"-c", `model_providers.mock={name="mock",base_url="` + codexURL + `/v1",wire_api="responses",env_key="MOCK_API_KEY"}`,
		"-c", "model=gpt-5.3-codex",
		"-c", "sandbox_mode=danger-full-access",
		"-c", "approval_policy=untrusted",
	}
	var args []string
	for _, a := range codexArgs {
		args = append(args, q(a))
	}
	codexAgent := "---\nname: codex\ndescription: Codex, through codex-acp\nprovider: acp\n" +
		"command: " + q(filepath.Join(nm, "@zed-industries", "codex-acp-linux-x64", "bin", "codex-acp")) + "\n" +
		"args: [" + strings.Join(args, ", ") + "]\n" +
		"permission: " + permission + "\ntimeout: 5m\nmcpServers: [reins]\n" +
		"sandbox:\n  writable: [" + q(c.srvHome) + "]\n" +
		"env:\n  MOCK_API_KEY: test-key\n  " + testutil.MarkEnv + ": " + q(c.mark) + "\n---\nUnused: an ACP child has its own prompt.\n"
	files := map[string]string{
		filepath.Join(c.home, "config.yaml"):        config,
		filepath.Join(c.home, "agents", "codex.md"): codexAgent,
		// The parent gets only subagent: no MCP tool of its own, so it
		// never starts the server itself.
		filepath.Join(c.home, "agents", "boss.md"): "---\nname: boss\ndescription: delegates\ntools: [subagent]\n---\nDelegate.\n",
	}
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// run runs the parent to its end and returns its --json result.
func (c *codexCaller) run() runResult {
	c.t.Helper()
	cmd := reinsIn(c.t, c.cwd, c.home, "", "run", "--json", "--agent", "boss", "-m", "openai/test", "--base-url", c.parentURL, "delegate")
	cmd.Env = append(cmd.Env, c.markEnv)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var res runResult
	if err != nil || json.Unmarshal(out, &res) != nil {
		c.logState()
		c.t.Fatalf("reins run: %v\n%s\n%s", err, out, stderr.String())
	}
	c.t.Cleanup(func() {
		if c.t.Failed() {
			c.logState()
		}
	})
	return res
}

// logState logs what explains a failure: the host log (the child's
// stderr tail, its permission decisions) and every model request.
func (c *codexCaller) logState() {
	hostLog, _ := os.ReadFile(filepath.Join(c.home, "logs", "reins.log"))
	c.t.Logf("host log:\n%s", hostLog)
	for i, r := range c.codexSrv.Requests() {
		c.t.Logf("Codex's model request %d (reply %d): tools %s; last %q", i, r.Index, toolNames(r.Body), r.Last)
	}
	for i, r := range c.parentSrv.Requests() {
		c.t.Logf("the parent's model request %d (reply %d): last %q", i, r.Index, r.Last)
	}
}

func (c *codexCaller) codexRequest(n int) mock.Recorded {
	c.t.Helper()
	r, ok := c.codexSrv.Request(n)
	if !ok {
		c.t.Fatalf("Codex made no model request %d", n)
	}
	return r
}

// toolOutput is the output of the scripted run call as a later request of
// Codex's carries it back to the model.
func (c *codexCaller) toolOutput() (string, bool) {
	for _, r := range c.codexSrv.Requests() {
		var req struct {
			Input []struct {
				Type   string          `json:"type"`
				CallID string          `json:"call_id"`
				Output json.RawMessage `json:"output"`
			} `json:"input"`
		}
		if json.Unmarshal(r.Body, &req) != nil {
			continue
		}
		for _, it := range req.Input {
			if it.Type == "function_call_output" && it.CallID == "call_reins" {
				var s string
				if json.Unmarshal(it.Output, &s) != nil {
					s = string(it.Output)
				}
				return s, true
			}
		}
	}
	return "", false
}

// serverSession reports whether the server's REINS_HOME holds a child
// session of an mcp-serve session: id, or any when id is empty.
func (c *codexCaller) serverSession(id string) bool {
	infos, _ := session.Scan(filepath.Join(c.srvHome, "home", "sessions"))
	servers := map[string]bool{}
	for _, in := range infos {
		if in.Header.Origin == session.OriginMCPServe {
			servers[in.Header.ID] = true
		}
	}
	for _, in := range infos {
		if servers[in.Header.ParentSession] && (id == "" || in.Header.ID == id) {
			return true
		}
	}
	return false
}

// permission checks that Codex asked before the MCP tool call and that
// the agent file's permission answered it.
func (c *codexCaller) permission(decision string) {
	c.t.Helper()
	hostLog, _ := os.ReadFile(filepath.Join(c.home, "logs", "reins.log"))
	policy := map[string]string{"allowed": "allow", "rejected": "reject"}[decision]
	if want := "(codex): permission request of kind other answered " + decision + " (policy " + policy + ")"; !bytes.Contains(hostLog, []byte(want)) {
		c.t.Errorf("the host log has no %q:\n%s", want, hostLog)
	}
}

// noneLeft: the parent ended, and with it Codex and the server Codex
// started (both carry the mark).
func (c *codexCaller) noneLeft() {
	c.t.Helper()
	if left := testutil.LeftBehind(c.mark, testutil.OrphanWait); len(left) > 0 {
		c.t.Fatalf("alive after the run: %v", left)
	}
}

// responsesTool is a tool of a Responses request: a function, a built-in,
// or a namespace of functions.
type responsesTool struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

func requestTools(body []byte) ([]responsesTool, bool) {
	var req struct {
		Tools []responsesTool `json:"tools"`
	}
	err := json.Unmarshal(body, &req)
	return req.Tools, err == nil
}

// hasNamespaceTool reports whether a Responses request body offers fn in
// the namespace tool ns.
func hasNamespaceTool(body []byte, ns, fn string) bool {
	tools, _ := requestTools(body)
	for _, tl := range tools {
		if tl.Type == "namespace" && tl.Name == ns {
			for _, f := range tl.Tools {
				if f.Name == fn {
					return true
				}
			}
		}
	}
	return false
}

// toolNames lists a Responses request's tools, a namespace's as
// NS.NAME.
func toolNames(body []byte) string {
	tools, ok := requestTools(body)
	if !ok {
		return "(not JSON)"
	}
	var names []string
	for _, tl := range tools {
		switch {
		case tl.Type == "namespace":
			for _, f := range tl.Tools {
				names = append(names, tl.Name+"."+f.Name)
			}
		case tl.Name != "":
			names = append(names, tl.Name)
		default:
			names = append(names, tl.Type)
		}
	}
	return strings.Join(names, ",")
}

// linkOrCopy makes dst the file src: a hard link, or a copy across file
// systems.
func linkOrCopy(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Link(src, dst) == nil {
		return
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
