package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/reinsdev/reins/internal/testutil"
	"go.uber.org/goleak"
)

// acpCmd runs the test binary as reins in cwd, its processes marked.
func acpCmd(t *testing.T, cwd, home string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "REINS_AS_MAIN=1", "REINS_HOME="+home,
		"DEEPSEEK_API_KEY=", "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", testutil.MarkChildren(t))
	cmd.Dir = cwd
	return cmd
}

// editor is a minimal ACP client (the Go SDK's client side) that records
// the agent's text.
type editor struct {
	mu   sync.Mutex
	text strings.Builder
}

func (e *editor) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	if c := n.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
		e.mu.Lock()
		e.text.WriteString(c.Content.Text.Text)
		e.mu.Unlock()
	}
	return nil
}

func (e *editor) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
}

func (e *editor) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound("fs/read_text_file")
}

func (e *editor) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound("fs/write_text_file")
}

func (e *editor) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound("terminal/create")
}

func (e *editor) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound("terminal/kill")
}

func (e *editor) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound("terminal/output")
}

func (e *editor) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound("terminal/release")
}

func (e *editor) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound("terminal/wait_for_exit")
}

// TestACPCommand runs the real `reins acp` command for one prompt and
// checks that it exits 0 when the editor closes its stdin.
func TestACPCommand(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // after the mock server stops
	url, _ := startMock(t, `
replies:
  - match: say hello
    text: hello from reins
`)
	cwd, home := t.TempDir(), t.TempDir()
	cmd := acpCmd(t, cwd, home, "acp", "-m", "openai/test", "--base-url", url)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ed := &editor{}
	conn := sdk.NewClientSideConnection(ed, stdin, stdout)
	ctx := context.Background()
	init, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err != nil || init.ProtocolVersion != 1 || !init.AgentCapabilities.LoadSession {
		t.Fatalf("initialize: %+v, %v", init, err)
	}
	ns, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	resp, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("say hello")}})
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v", resp, err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("reins acp: %v\n%s", err, stderr.String())
	}
	<-conn.Done()
	ed.mu.Lock()
	got := ed.text.String()
	ed.mu.Unlock()
	if got != "hello from reins" {
		t.Errorf("agent text %q", got)
	}
	if _, err := os.Stat(filepath.Join(home, "sessions", string(ns.SessionId), "session.jsonl")); err != nil {
		t.Errorf("no session log for the ACP session: %v", err)
	}
}

func TestACPCommandUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad permission", []string{"acp", "--permission", "root"}, "--permission"},
		{"arguments", []string{"acp", "extra"}, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := acpCmd(t, t.TempDir(), t.TempDir(), tc.args...)
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			code, stderr := exitCode(t, cmd)
			if code != exitUsage || !strings.Contains(stderr, tc.want) || stdout.Len() != 0 {
				t.Errorf("exit %d, stderr %q, stdout %q", code, stderr, stdout.String())
			}
		})
	}
}

// TestACPStartsWithoutKey (issue 15): with no API key `reins acp` still
// starts (an editor would see only a broken pipe), says so on stderr, and
// answers the first prompt with an error naming the variable.
func TestACPStartsWithoutKey(t *testing.T) {
	cwd, home := t.TempDir(), t.TempDir()
	cmd := acpCmd(t, cwd, home, "acp", "-m", "deepseek/deepseek-chat")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	conn := sdk.NewClientSideConnection(&editor{}, stdin, stdout)
	ctx := context.Background()
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatalf("initialize: %v\n%s", err, stderr.String())
	}
	ns, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	_, err = conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("hi")}})
	var re *sdk.RequestError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "DEEPSEEK_API_KEY is not set") {
		t.Fatalf("prompt error %#v, want one naming DEEPSEEK_API_KEY", err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("reins acp: %v\n%s", err, stderr.String())
	}
	<-conn.Done()
	if !strings.Contains(stderr.String(), "reins: warning: DEEPSEEK_API_KEY is not set") {
		t.Errorf("stderr %q", stderr.String())
	}
}

const acpCanary = "ACPCANARY-5eed-d00d"

// TestRunNeverLeaksACPChildText runs `reins run --json` whose model
// delegates to real ACP children (the TypeScript SDK's agent side) that put
// a canary in their stderr, error messages, session id, tool titles, raw
// input, locations, option names, metadata and an unknown stop reason. The
// canary reaches no tool result, diagnostic, session event or --json
// output; it is in the host log only.
func TestRunNeverLeaksACPChildText(t *testing.T) {
	nm := testutil.Peers(t)
	sdkPath := filepath.Join(nm, "@agentclientprotocol", "sdk", "dist", "v1", "stable", "acp.js")
	child := filepath.Join(testutil.RepoRoot(t), "internal", "subagent", "acpchild", "testdata", "child.mjs")
	agent := func(name, scenario, permission string) string {
		return "---\nname: " + name + "\ndescription: a scripted ACP child\nprovider: acp\ncommand: node\n" +
			"args: [\"" + child + "\"]\npermission: " + permission + "\nenv:\n" +
			"  ACP_SDK_PATH: \"" + sdkPath + "\"\n  ACP_SCENARIO: " + scenario + "\n  ACP_CANARY: " + acpCanary + "\n" +
			"  ACP_PERM_KIND: edit\n---\nUnused: an ACP child has its own prompt.\n"
	}
	url, _ := startMock(t, `
replies:
  - match: fan-out
    toolCalls:
      - {id: a, name: subagent, arguments: {description: leaky rejected, agent: leaky-reject, prompt: task one}}
      - {id: b, name: subagent, arguments: {description: leaky allowed, agent: leaky-allow, prompt: task two}}
      - {id: c, name: subagent, arguments: {description: refuses session, agent: refuser, prompt: task three}}
      - {id: d, name: subagent, arguments: {description: odd stop, agent: odd, prompt: task four}}
      - {id: e, name: subagent, arguments: {description: crashes, agent: crasher, prompt: task five}}
  - match: Error
    text: parent done
`)
	cwd, home := t.TempDir(), t.TempDir()
	files := map[string]string{
		".reins/config.yaml":       "providers:\n  openai:\n    retry: {maxRetries: 0, initialDelay: 1ms, maxDelay: 1ms, jitter: 0}\n",
		".reins/agents/leaky-r.md": agent("leaky-reject", "leaky", "reject"),
		".reins/agents/leaky-a.md": agent("leaky-allow", "leaky", "allow"),
		".reins/agents/refuser.md": agent("refuser", "reject_new_session", "reject"),
		".reins/agents/odd.md":     agent("odd", "unknown_stop", "reject"),
		".reins/agents/crasher.md": agent("crasher", "crash_exit", "reject"),
	}
	for name, body := range files {
		p := filepath.Join(cwd, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Trust(t, home, cwd)
	cmd := acpCmd(t, cwd, home, "run", "--json", "-m", "openai/test", "--base-url", url, "fan-out")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reins run: %v\n%s", err, stderr.String())
	}
	if bytes.Contains(out, []byte(acpCanary)) {
		t.Errorf("--json output carries child text: %s", out)
	}
	var res runResult
	if err := json.Unmarshal(out, &res); err != nil || res.Output != "parent done" || res.StopReason != "completed" {
		t.Fatalf("stdout %q: %v", out, err)
	}
	log, err := os.ReadFile(filepath.Join(home, "sessions", res.SessionID, "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`Subagent failure (provider: acp; stage: prompt; category: unknown; stop reason: error)\nPermission decision (policy: reject; request: edit; decision: rejected)`,
		`Subagent failure (provider: acp; stage: prompt; category: unknown; stop reason: error)\nPermission decision (policy: allow; request: edit; decision: allowed)`,
		`Subagent failure (provider: acp; stage: new-session; category: protocol; stop reason: error)`,
		`Subagent failure (provider: acp; stage: prompt; category: unknown; stop reason: error)"`,
		`Subagent failure (provider: acp; stage: process; category: process-exit; stop reason: error; exit code: 3)`,
	} {
		if !bytes.Contains(log, []byte(want)) {
			t.Errorf("the parent's log lacks %s", want)
		}
	}
	testutil.CanaryOnlyInHostLog(t, home, acpCanary)
}

// TestACPReportsUntrustedFiles: an editor session in an untrusted folder
// ignores the folder's own files and says so in the host log, once per
// session.
func TestACPReportsUntrustedFiles(t *testing.T) {
	url, _ := startMock(t, "replies: []\n")
	cwd, home := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(cwd, ".claude", "agents"), 0o755)
	os.WriteFile(filepath.Join(cwd, ".claude", "agents", "helper.md"), []byte("---\nprovider: acp\ncommand: sh\n---\n"), 0o644)
	cmd := acpCmd(t, t.TempDir(), home, "acp", "-m", "openai/test", "--base-url", url)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	conn := sdk.NewClientSideConnection(&editor{}, stdin, stdout)
	ctx := context.Background()
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("session/new: %v", err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("reins acp: %v", err)
	}
	<-conn.Done()
	hostLog, _ := os.ReadFile(filepath.Join(home, "logs", "reins.log"))
	want := "acp: untrusted folder " + cwd + ": ignoring .claude/agents/helper.md; to use them run: reins trust " + cwd
	if strings.Count(string(hostLog), "untrusted") != 1 || !strings.Contains(string(hostLog), want) {
		t.Errorf("host log %q, want one line with %q", hostLog, want)
	}
}
