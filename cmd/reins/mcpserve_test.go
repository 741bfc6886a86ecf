package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// mcpServeScript is the mock model of the `reins mcp serve` tests: an
// echo, and a prompt word for each way a child can end.
const mcpServeScript = `replies:
  - {match: EMPTY-PLEASE, fault: empty, repeat: true}
  - {match: STALL-PLEASE, fault: stall, repeat: true}
  - {match: LIMIT-PLEASE, text: partial answer, finish: length, repeat: true}
  - {match: THINK-PLEASE, reasoning: only thinking here, repeat: true}
  - {match: BARRIER-PLEASE, text: met, barrier: 2, repeat: true}
  - {match: GLOB-PLEASE, toolCalls: [{name: glob, arguments: {pattern: "*.txt"}}]}
  - {match: hello.txt, text: globbed, delay: 3s, repeat: true}
  - {match: GIT-PLEASE, toolCalls: [{name: bash, arguments: {command: "echo probe > .git/probe && echo wrote"}}], repeat: true}
  - {match: "the first run failed because .git is read-only", text: git written, repeat: true}
  - {match: ".git is read-only", text: git refused, repeat: true}
fallback: {echo: true, text: 'mock: '}
`

// mcpResult is a call's structuredContent (docs/mcp-server.md).
type mcpResult struct {
	StopReason string         `json:"stopReason"`
	Output     string         `json:"output"`
	Diagnostic string         `json:"diagnostic"`
	Child      string         `json:"child"`
	SessionID  string         `json:"sessionId"`
	Usage      map[string]any `json:"usage"`
	Job        string         `json:"job"`
}

// mcpWorkspace is a trusted workspace with a reins-provider agent
// (helper: a real child process) and subagents.maxParallel 2.
func mcpWorkspace(t *testing.T) (cwd, home string) {
	t.Helper()
	cwd, home = t.TempDir(), t.TempDir()
	files := map[string]string{
		"hello.txt":               "hi\n",
		".reins/config.yaml":      "subagents:\n  maxParallel: 2\n",
		".reins/agents/helper.md": "---\nname: helper\ndescription: a reins child\nprovider: reins\n---\nYou help.\n",
		"script.yaml":             mcpServeScript,
	}
	for name, body := range files {
		p := filepath.Join(cwd, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Trust(t, home, cwd)
	return cwd, home
}

// mcpServe starts `reins mcp serve` (reins → reins-extra) in cwd as the
// MCP Go SDK's client sees it.
func mcpServe(t *testing.T, cwd, home, markEnv string, opts *mcp.ClientOptions, args ...string) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	useExtraHelper(t)
	cmd := exec.Command(os.Args[0], append([]string{"mcp", "serve", "-m", "mock/echo"}, args...)...)
	cmd.Env = testutil.Env("REINS_AS_MAIN=1", "REINS_HOME="+home, markEnv, "REINS_MOCK_SCRIPT="+filepath.Join(cwd, "script.yaml"))
	cmd.Dir = cwd
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "reins-test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// TerminateDuration: the server must end on the end of stdin by
	// itself, never by the transport's SIGTERM.
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Minute}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, cmd
}

func callMCP(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, mcpResult) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return res, structured(t, res)
}

func structured(t *testing.T, res *mcp.CallToolResult) mcpResult {
	t.Helper()
	var r mcpResult
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("structuredContent %s: %v", b, err)
		}
	}
	return r
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// others are the marked processes other than the server itself: its
// children.
func others(mark string, server int) []testutil.Proc {
	var out []testutil.Proc
	for _, p := range testutil.Marked(mark) {
		if p.PID != server {
			out = append(out, p)
		}
	}
	return out
}

// TestMCPServeGoClient drives `reins mcp serve` with the MCP Go SDK's
// client: the tools and their output schema, a completed run and its
// continuation, child_output, every non-completed ending (empty,
// max-tokens) isError with the contract, a reasoning-only answer that
// says so, a background job, job_kill, a cancelled call whose child
// process is gone while the server keeps serving, calls beyond
// maxParallel waiting in order, and the end of stdin ending the server.
func TestMCPServeGoClient(t *testing.T) {
	markEnv := testutil.MarkChildren(t)
	mark := strings.TrimPrefix(markEnv, testutil.MarkEnv+"=")
	cwd, home := mcpWorkspace(t)
	var (
		pmu      sync.Mutex
		progress []string
	)
	cs, cmd := mcpServe(t, cwd, home, markEnv, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			pmu.Lock()
			progress = append(progress, r.Params.Message)
			pmu.Unlock()
		},
	})
	closed := false
	defer func() {
		if !closed {
			cs.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if (tl.Name == "run" || tl.Name == "reply" || tl.Name == "job_output") && tl.OutputSchema == nil {
			t.Errorf("%s declares no outputSchema", tl.Name)
		}
	}
	if got := strings.Join(names, ","); got != "child_output,job_kill,job_output,reply,run" {
		t.Errorf("tools %s", got)
	}

	// A completed run: the contract, the text with its child line.
	res, r := callMCP(t, ctx, cs, "run", map[string]any{"prompt": "hello there"})
	if res.IsError || r.StopReason != "completed" || r.Output != "mock: hello there" || !strings.HasPrefix(r.Child, "child-") || r.SessionID == "" || r.Usage["inputTokens"] == nil {
		t.Fatalf("run: isError %v, %+v %q", res.IsError, r, textOf(res))
	}
	if txt := textOf(res); txt != "mock: hello there\nchild: "+r.Child {
		t.Errorf("run text %q", txt)
	}
	// reply continues the same child with its conversation.
	res, r2 := callMCP(t, ctx, cs, "reply", map[string]any{"child": r.Child, "prompt": "and again"})
	if res.IsError || r2.StopReason != "completed" || r2.Output != "mock: and again" || r2.Child != r.Child {
		t.Fatalf("reply: %+v", r2)
	}
	res, _ = callMCP(t, ctx, cs, "child_output", map[string]any{"child": r.Child, "offset": 0})
	if res.IsError || !strings.Contains(textOf(res), "mock: and again") {
		t.Errorf("child_output: %q", textOf(res))
	}
	res, _ = callMCP(t, ctx, cs, "reply", map[string]any{"child": "child-nobody", "prompt": "x"})
	if !res.IsError || !strings.Contains(textOf(res), "no child") {
		t.Errorf("reply to an unknown child: %q", textOf(res))
	}

	// An empty answer is an error with EMPTY_RESPONSE, never a success.
	res, r = callMCP(t, ctx, cs, "run", map[string]any{"prompt": "EMPTY-PLEASE"})
	if !res.IsError || r.StopReason != "error" || !strings.Contains(r.Diagnostic, "EMPTY_RESPONSE") || r.Output != "" {
		t.Errorf("empty child: isError %v, %+v", res.IsError, r)
	}
	res, r = callMCP(t, ctx, cs, "run", map[string]any{"prompt": "LIMIT-PLEASE"})
	if !res.IsError || r.StopReason != "max-tokens" || r.Output != "partial answer" {
		t.Errorf("max-tokens child: isError %v, %+v", res.IsError, r)
	}
	// Reasoning only: never an empty text with isError false.
	res, r = callMCP(t, ctx, cs, "run", map[string]any{"prompt": "THINK-PLEASE"})
	if txt := textOf(res); strings.TrimSpace(strings.Split(txt, "\nchild:")[0]) == "" || !strings.Contains(txt, "reasoning") {
		t.Errorf("reasoning-only answer: isError %v text %q %+v", res.IsError, txt, r)
	}
	// Wider than the server's mode, a cwd outside it: refused.
	res, _ = callMCP(t, ctx, cs, "run", map[string]any{"prompt": "x", "permission": "full-access"})
	if !res.IsError || !strings.Contains(textOf(res), "wider") {
		t.Errorf("full-access from a workspace-write server: %q", textOf(res))
	}
	res, _ = callMCP(t, ctx, cs, "run", map[string]any{"prompt": "x", "cwd": ".."})
	if !res.IsError || !strings.Contains(textOf(res), "outside") {
		t.Errorf("cwd outside: %q", textOf(res))
	}

	// Progress: the first names the child, a later one its activity.
	params := &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"prompt": "GLOB-PLEASE"}}
	params.SetProgressToken("p-1")
	res, err = cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	r = structured(t, res)
	// The Go SDK's client hands notifications to its handler on their
	// own goroutine: the last may land just after the result.
	var got []string
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		pmu.Lock()
		got = append([]string(nil), progress...)
		pmu.Unlock()
		if len(got) >= 2 || time.Now().After(end) {
			break
		}
	}
	if res.IsError || len(got) < 2 || !strings.HasPrefix(got[0], "child "+r.Child+" started") || !strings.Contains(strings.Join(got[1:], "\n"), "child "+r.Child+": ") {
		t.Errorf("progress %q for %+v", got, r)
	}

	// A background job; job_output waits for it.
	res, r = callMCP(t, ctx, cs, "run", map[string]any{"prompt": "in the background", "background": true})
	if res.IsError || r.StopReason != "running" || r.Job == "" {
		t.Fatalf("background: %+v", r)
	}
	res, r = callMCP(t, ctx, cs, "job_output", map[string]any{"id": r.Job, "wait": 50})
	if res.IsError || r.StopReason != "completed" || r.Output != "mock: in the background" {
		t.Errorf("job_output: %+v", r)
	}

	// A foreground call cancelled by the client: its child process (a
	// reins child) is torn down, and the server keeps serving.
	server := cmd.Process.Pid
	cctx, ccancel := context.WithCancel(ctx)
	started := make(chan string, 1)
	cs2Progress := func(msg string) {
		if strings.HasPrefix(msg, "child ") && strings.Contains(msg, " started") {
			select {
			case started <- strings.Fields(msg)[1]:
			default:
			}
		}
	}
	pmu.Lock()
	progress = nil
	pmu.Unlock()
	done := make(chan error, 1)
	go func() {
		p := &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"prompt": "STALL-PLEASE", "agent": "helper"}}
		p.SetProgressToken("p-2")
		_, err := cs.CallTool(cctx, p)
		done <- err
	}()
	var stalled string
	deadline := time.Now().Add(60 * time.Second)
	for stalled == "" {
		pmu.Lock()
		for _, m := range progress {
			cs2Progress(m)
		}
		pmu.Unlock()
		select {
		case stalled = <-started:
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the stalled call's child never started")
		}
	}
	for len(others(mark, server)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the reins child's process never showed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	ccancel()
	if err := <-done; err == nil {
		t.Error("the cancelled call returned no error to its client")
	}
	for left := others(mark, server); len(left) > 0; left = others(mark, server) {
		if time.Now().After(deadline) {
			t.Fatalf("alive after the cancel: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
	res, _ = callMCP(t, ctx, cs, "child_output", map[string]any{"child": stalled, "offset": 0})
	if res.IsError || !strings.Contains(textOf(res), "cancelled") {
		t.Errorf("the cancelled child's output by id: %q", textOf(res))
	}
	res, r = callMCP(t, ctx, cs, "run", map[string]any{"prompt": "after the cancel"})
	if res.IsError || r.Output != "mock: after the cancel" {
		t.Errorf("after the cancel: %+v", r)
	}

	// maxParallel 2: a third call waits until a slot is free, in order.
	var jobs []string
	for range 2 {
		_, r := callMCP(t, ctx, cs, "run", map[string]any{"prompt": "STALL-PLEASE", "background": true})
		if r.Job == "" {
			t.Fatalf("stalled job: %+v", r)
		}
		jobs = append(jobs, r.Job)
	}
	_, third := callMCP(t, ctx, cs, "run", map[string]any{"prompt": "third in line", "background": true})
	res, r = callMCP(t, ctx, cs, "job_output", map[string]any{"id": third.Job, "wait": 1})
	if r.StopReason != "running" {
		t.Fatalf("the third call ran beside two stalled ones under maxParallel 2: %+v", r)
	}
	res, r = callMCP(t, ctx, cs, "job_kill", map[string]any{"id": jobs[0]})
	if !res.IsError || r.StopReason != "aborted" {
		t.Errorf("job_kill: isError %v %+v", res.IsError, r)
	}
	res, r = callMCP(t, ctx, cs, "job_output", map[string]any{"id": third.Job, "wait": 50})
	if res.IsError || r.Output != "mock: third in line" {
		t.Errorf("third after a slot freed: %+v", r)
	}
	// Every call is a session of its own that reins log lists.
	out, err := reinsIn(t, cwd, home, "", "log").Output()
	if err != nil || !strings.Contains(string(out), r.SessionID) || !strings.Contains(string(out), "agent mcp-serve") {
		t.Errorf("reins log: %v\n%s", err, out)
	}

	// The end of stdin, with a job still stalled: every child is torn
	// down and the server exits 0 by itself.
	closed = true
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if st := cmd.ProcessState; st == nil || st.ExitCode() != 0 {
		t.Errorf("server after EOF: %v", st)
	}
	if left := testutil.LeftBehind(mark, testutil.OrphanWait); len(left) > 0 {
		t.Fatalf("alive after EOF: %v", left)
	}
	// The server session's log: the third call's child started only after
	// the killed job's child ended.
	checkQueueOrder(t, home)
}

// checkQueueOrder reads the server session's log: every child that
// started ended there, and never more than maxParallel (2) ran at once,
// though two did.
func checkQueueOrder(t *testing.T, home string) {
	t.Helper()
	root := filepath.Join(home, "sessions")
	infos, _ := session.Scan(root)
	for _, in := range infos {
		if in.Header.Origin != session.OriginMCPServe {
			continue
		}
		ld, err := session.Load(filepath.Join(root, in.Header.ID, session.FileName))
		if err != nil {
			t.Fatal(err)
		}
		running, most, starts := 0, 0, 0
		for _, e := range ld.Events {
			switch e.Type {
			case session.TypeSubagentStart:
				starts++
				running++
				most = max(most, running)
			case session.TypeSubagentEnd:
				running--
			}
		}
		if starts == 0 || running != 0 || most != 2 {
			t.Errorf("server session %s: %d children, %d not ended, at most %d at once (want 2: maxParallel)", in.Header.ID, starts, running, most)
		}
		return
	}
	t.Error("no mcp-serve session among the sessions")
}

// TestMCPServeTypeScriptClient: the official MCP TypeScript SDK's client
// (testdata/peers, @modelcontextprotocol/sdk) lists the tools, runs,
// replies, gets an empty child as isError with EMPTY_RESPONSE, follows
// progress, cancels a call whose reins child is then gone, and runs two
// calls in parallel (internal/mcpserve/testdata/tsclient.mjs asserts).
func TestMCPServeTypeScriptClient(t *testing.T) {
	nm := testutil.Peers(t)
	useExtraHelper(t)
	markEnv := testutil.MarkChildren(t)
	cwd, home := mcpWorkspace(t)
	testutil.Git(t, cwd, "init", "-q") // the elicitation's .git
	script := filepath.Join(testutil.RepoRoot(t), "internal", "mcpserve", "testdata", "tsclient.mjs")
	cmd := exec.Command("node", script)
	cmd.Env = testutil.Env("REINS_AS_MAIN=1", "REINS_HOME="+home, markEnv, "REINS_MOCK_SCRIPT="+filepath.Join(cwd, "script.yaml"),
		"MCP_SDK_DIR="+filepath.Join(nm, "@modelcontextprotocol", "sdk"), "REINS="+os.Args[0], "WORKSPACE="+cwd)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tsclient.mjs: %v\n%s", err, out)
	}
	var summary struct {
		Tools     []string `json:"tools"`
		SessionID string   `json:"sessionId"`
		Cancelled string   `json:"cancelled"`
		Parallel  []string `json:"parallel"`
		Progress  []string `json:"progress"`
		Question  string   `json:"question"`
	}
	if err := json.Unmarshal(out, &summary); err != nil || len(summary.Tools) != 5 || summary.SessionID == "" || len(summary.Parallel) != 2 || summary.Question == "" {
		t.Fatalf("summary %s: %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(cwd, ".git", "probe")); err != nil {
		t.Errorf("the elicited yes did not let the command write .git: %v", err)
	}
	// The call's session is on disk, listed by reins log.
	logOut, err := reinsIn(t, cwd, home, "", "log").Output()
	if err != nil || !strings.Contains(string(logOut), summary.SessionID) {
		t.Errorf("reins log: %v\n%s", err, logOut)
	}
}

// TestMCPServeBudget: --budget-tokens bounds the server's whole lifetime:
// once the calls together spent it, the next call's child never starts
// and its result is aborted with category budget; the server goes on
// answering.
func TestMCPServeBudget(t *testing.T) {
	markEnv := testutil.MarkChildren(t)
	cwd, home := mcpWorkspace(t)
	cs, cmd := mcpServe(t, cwd, home, markEnv, nil, "--budget-tokens", "100")
	defer cs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The mock's echo costs thousands of input tokens: the first call
	// spends the budget (and may be stopped by it).
	callMCP(t, ctx, cs, "run", map[string]any{"prompt": "spend it"})
	res, r := callMCP(t, ctx, cs, "run", map[string]any{"prompt": "one more"})
	if !res.IsError || r.StopReason != "aborted" || !strings.Contains(r.Diagnostic, "category: budget") {
		t.Errorf("a call past the server's budget: isError %v %+v", res.IsError, r)
	}
	if res, _ := callMCP(t, ctx, cs, "job_output", map[string]any{"id": "job-404"}); !res.IsError {
		t.Error("the server stopped answering after its budget ran out")
	}
	cs.Close()
	if st := cmd.ProcessState; st == nil || st.ExitCode() != 0 {
		t.Errorf("server after EOF: %v", st)
	}
}

// TestMCPServeSIGTERM: SIGTERM while a call's reins child runs (and the
// client keeps stdin open) tears the child down and ends the server with
// 143; nothing is left.
func TestMCPServeSIGTERM(t *testing.T) {
	markEnv := testutil.MarkChildren(t)
	mark := strings.TrimPrefix(markEnv, testutil.MarkEnv+"=")
	cwd, home := mcpWorkspace(t)
	cs, cmd := mcpServe(t, cwd, home, markEnv, nil)
	defer cs.Close()
	server := cmd.Process.Pid
	done := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"prompt": "STALL-PLEASE", "agent": "helper"}})
		if err != nil {
			done <- "closed"
			return
		}
		done <- structured(t, res).StopReason
	}()
	deadline := time.Now().Add(60 * time.Second)
	for len(others(mark, server)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the reins child's process never showed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The call ends with the server: aborted, or the connection closed —
	// never left to run on until the 50 s wait makes it a job.
	if got := <-done; got != "aborted" && got != "closed" {
		t.Errorf("the call in flight at SIGTERM ended %q", got)
	}
	for !exited(server) {
		if time.Now().After(deadline) {
			t.Fatalf("the server is alive after SIGTERM; with it %v", others(mark, server))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if left := testutil.LeftBehind(mark, testutil.OrphanWait); len(left) > 0 {
		t.Fatalf("alive after SIGTERM: %v", left)
	}
}

// exited reports whether pid is gone or a zombie waiting to be reaped.
func exited(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z")
}
