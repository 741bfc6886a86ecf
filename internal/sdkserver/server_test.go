package sdkserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/sdkserver"
	"github.com/reinsdev/reins/internal/sdkserver/sdkfake"
	"github.com/reinsdev/reins/internal/testutil"
	"github.com/reinsdev/reins/sdk"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	sdkfake.Dispatch()
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0") // children exit at once under -race
	}
	goleak.VerifyTestMain(m)
}

const toolScript = `
replies:
  - match: list the files
    toolCalls:
      - {id: call_1, name: ls, arguments: {}}
  - match: hello.txt
    text: I found hello.txt
`

// workspace makes a cwd with a file and a REINS_HOME.
func workspace(t *testing.T) (cwd, home string) {
	t.Helper()
	cwd, home = t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "hello.txt"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return cwd, home
}

func mockServer(t *testing.T, script string) (string, *mock.Server) {
	t.Helper()
	sc, err := mock.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	url, srv, stop := mock.StartTest(sc)
	t.Cleanup(stop)
	return url, srv
}

// TestPythonClient: a client written in Python drives the runtime process
// through initialize, errors for a malformed line and an unknown method, a
// prompt whose run calls a tool, its events up to status idle, and
// shutdown, after which the runtime exits 0.
func TestPythonClient(t *testing.T) {
	python := testutil.Python(t)
	url, srv := mockServer(t, toolScript)
	cwd, home := workspace(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("testdata/client.py")
	if err != nil {
		t.Fatal(err)
	}
	mark := sdkfake.NewMark(t.Name())
	cmd := exec.Command(python, script, exe, "sdk", "-m", "openai/test", "--base-url", url)
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), sdkfake.EnvAsSDK+"=1", "REINS_HOME="+home, sdkfake.EnvMark+"="+mark)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client.py: %v\n%s", err, stderr.String())
	}
	var got struct {
		Server           sdk.ServerInfo
		ParseError       int
		UnknownMethod    int
		SessionID        string
		Statuses         []string
		FirstEvent       string
		ToolCalls        []string
		ToolResultErrors []bool
		TurnEnd          []string
		StopReason       string
		Output           string
		Shutdown         map[string]any
		TrailingBytes    int
		ExitCode         int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("summary %q: %v", out, err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"server name", got.Server.Name, "reins"},
		{"parse error code", got.ParseError, sdk.CodeParseError},
		{"unknown method code", got.UnknownMethod, sdk.CodeMethodNotFound},
		{"statuses", strings.Join(got.Statuses, ","), "running,idle"},
		{"first event", got.FirstEvent, "turn/start"},
		{"tool calls", strings.Join(got.ToolCalls, ","), "ls"},
		{"tool result errors", fmt.Sprint(got.ToolResultErrors), "[false]"},
		{"turn end", strings.Join(got.TurnEnd, ","), "completed"},
		{"stop reason", got.StopReason, "completed"},
		{"output", got.Output, "I found hello.txt"},
		{"shutdown result", fmt.Sprint(got.Shutdown), "map[]"},
		{"frames after shutdown", got.TrailingBytes, 0},
		{"exit code", got.ExitCode, 0},
	}
	for _, c := range checks {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if srv.Count() != 2 {
		t.Errorf("model requests %d, want 2", srv.Count())
	}
	// The session log is on disk, as for any reins session.
	if _, err := os.Stat(filepath.Join(home, "sessions", got.SessionID, "session.jsonl")); err != nil {
		t.Error(err)
	}
	if pids := sdkfake.Leftovers(mark); len(pids) > 0 {
		t.Errorf("processes left behind: %v", pids)
	}
}

// conn runs a Server in this process over pipes.
type conn struct {
	t      *testing.T
	in     *io.PipeWriter
	frames chan map[string]any
	seen   []map[string]any // every frame next returned
	done   chan struct{}
	nextID int
}

func serve(t *testing.T, cfg sdkserver.Config) *conn {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &conn{t: t, in: inW, frames: make(chan map[string]any, 1024), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		sdkserver.New(cfg).Serve(ctx, inR, outW)
		outW.Close()
	}()
	go func() {
		defer close(c.done)
		fr := sdk.NewFrameReader(outR)
		for {
			line, err := fr.Next()
			if err != nil {
				close(c.frames)
				return
			}
			var f map[string]any
			if err := json.Unmarshal(line, &f); err != nil {
				t.Errorf("stdout carried a line that is not JSON: %q", line)
				continue
			}
			c.frames <- f
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-served
		inW.Close()
		inR.Close()
		<-c.done
	})
	return c
}

func (c *conn) sendLine(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, s+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *conn) request(method string, params any) int {
	c.t.Helper()
	c.nextID++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	c.sendLine(string(b))
	return c.nextID
}

// next returns the next frame; the bound only keeps a broken test from
// hanging forever.
func (c *conn) next() map[string]any {
	c.t.Helper()
	select {
	case f, ok := <-c.frames:
		if !ok {
			c.t.Fatal("stdout closed")
		}
		c.seen = append(c.seen, f)
		return f
	case <-time.After(30 * time.Second):
		c.t.Fatal("no frame")
	}
	return nil
}

// until returns frames up to and including the first for which stop holds.
func (c *conn) until(stop func(map[string]any) bool) []map[string]any {
	c.t.Helper()
	var out []map[string]any
	for {
		f := c.next()
		out = append(out, f)
		if stop(f) {
			return out
		}
	}
}

func isResponse(id int) func(map[string]any) bool {
	return func(f map[string]any) bool { v, ok := f["id"].(float64); return ok && int(v) == id }
}

func params(f map[string]any) map[string]any { p, _ := f["params"].(map[string]any); return p }

func isIdle(msg string) func(map[string]any) bool {
	return func(f map[string]any) bool {
		p := params(f)
		return f["method"] == sdk.NotifySessionStatus && p["status"] == "idle" && p["messageId"] == msg
	}
}

func last(fs []map[string]any) map[string]any { return fs[len(fs)-1] }

func errCode(f map[string]any) int {
	e, _ := f["error"].(map[string]any)
	v, _ := e["code"].(float64)
	return int(v)
}

func newConn(t *testing.T, script string) (*conn, *mock.Server) {
	url, srv := mockServer(t, script)
	cwd, home := workspace(t)
	c := serve(t, sdkserver.Config{Home: home, Cwd: cwd, Model: "openai/test", BaseURL: url, Getenv: func(string) string { return "" }})
	return c, srv
}

func (c *conn) initialize() {
	c.t.Helper()
	id := c.request(sdk.MethodInitialize, sdk.InitializeParams{ProtocolVersion: 1})
	if f := last(c.until(isResponse(id))); f["result"] == nil {
		c.t.Fatalf("initialize: %v", f)
	}
}

func (c *conn) prompt(session, text string) (sid, msg string) {
	c.t.Helper()
	id := c.request(sdk.MethodSessionPrompt, sdk.PromptParams{SessionID: session, Content: []sdk.Block{{Type: "text", Text: text}}})
	f := last(c.until(isResponse(id)))
	r, _ := f["result"].(map[string]any)
	sid, _ = r["sessionId"].(string)
	msg, _ = r["messageId"].(string)
	if sid == "" || msg == "" {
		c.t.Fatalf("prompt: %v", f)
	}
	return sid, msg
}

// The protocol's error answers: the runtime keeps serving after each.
func TestErrorAnswers(t *testing.T) {
	c, _ := newConn(t, toolScript)
	tests := []struct {
		name string
		send func() any // returns the expected id (nil for null)
		code int
	}{
		{"malformed line", func() any { c.sendLine("{not json"); return nil }, sdk.CodeParseError},
		{"line too long", func() any { c.sendLine(strings.Repeat("x", sdk.MaxFrameBytes+10)); return nil }, sdk.CodeParseError},
		{"not an object", func() any { c.sendLine("[1,2]"); return nil }, sdk.CodeInvalidRequest},
		{"no jsonrpc", func() any { c.sendLine(`{"id":7,"method":"shutdown"}`); return 7.0 }, sdk.CodeInvalidRequest},
		{"prompt before initialize", func() any {
			return float64(c.request(sdk.MethodSessionPrompt, sdk.PromptParams{Content: []sdk.Block{{Type: "text", Text: "x"}}}))
		}, sdk.CodeNotInitialized},
		{"unknown method", func() any { return float64(c.request("session/frobnicate", map[string]any{})) }, sdk.CodeMethodNotFound},
		{"bad protocol version", func() any { return float64(c.request(sdk.MethodInitialize, map[string]any{"protocolVersion": 9})) }, sdk.CodeInvalidParams},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.send()
			f := c.next()
			if f["id"] != want || errCode(f) != tc.code {
				t.Errorf("answer %v, want id %v code %d", f, want, tc.code)
			}
		})
	}
	// Still serving.
	c.initialize()
	id := c.request(sdk.MethodSessionPrompt, sdk.PromptParams{SessionID: "nope", Content: []sdk.Block{{Type: "text", Text: "x"}}})
	if f := c.next(); f["id"] != float64(id) || errCode(f) != sdk.CodeInvalidParams {
		t.Errorf("unknown session answer %v", f)
	}
	id = c.request(sdk.MethodInitialize, sdk.InitializeParams{ProtocolVersion: 1})
	if f := c.next(); errCode(f) != sdk.CodeInvalidRequest {
		t.Errorf("second initialize answer %v", f)
	}
}

func TestInitializeConfigurationError(t *testing.T) {
	c, _ := newConn(t, toolScript)
	id := c.request(sdk.MethodInitialize, sdk.InitializeParams{ProtocolVersion: 1, Model: "nosuchprovider/x"})
	if f := last(c.until(isResponse(id))); errCode(f) != sdk.CodeInvalidParams {
		t.Errorf("answer %v", f)
	}
}

// Prompts to a busy session queue and run in order, each framed by its own
// running and idle status.
func TestQueueOrder(t *testing.T) {
	c, _ := newConn(t, `
replies:
  - {match: first, text: one, delay: 100ms}
  - {match: second, text: two}
`)
	c.initialize()
	sid, m1 := c.prompt("", "first")
	_, m2 := c.prompt(sid, "second")
	frames := c.until(isIdle(m2))
	var seen []string
	for _, f := range c.seen {
		if f["method"] == sdk.NotifySessionStatus {
			p := params(f)
			seen = append(seen, fmt.Sprintf("%s:%s:%v", p["messageId"], p["status"], p["output"] != nil))
		}
	}
	want := []string{m1 + ":running:false", m1 + ":idle:true", m2 + ":running:false", m2 + ":idle:true"}
	if strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Errorf("statuses %v, want %v", seen, want)
	}
	out, _ := json.Marshal(params(last(frames))["output"])
	if string(out) != `[{"text":"two","type":"text"}]` {
		t.Errorf("second output %s", out)
	}
}

// session/cancel cancels the running turn: it ends aborted by the user.
func TestCancel(t *testing.T) {
	c, srv := newConn(t, `
replies:
  - {match: stall, fault: stall}
`)
	c.initialize()
	sid, msg := c.prompt("", "stall please")
	for srv.InFlight() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	id := c.request(sdk.MethodSessionCancel, sdk.CancelParams{SessionID: sid})
	// The reply to session/cancel and the turn's idle status race: the
	// cancellation ends the turn while the reply is being written. The
	// protocol does not order them, so wait for both.
	var idle, replied bool
	var frames []map[string]any
	var status map[string]any
	for !idle || !replied {
		f := c.next()
		frames = append(frames, f)
		if isIdle(msg)(f) {
			idle, status = true, f
		}
		if isResponse(id)(f) {
			replied = true
		}
	}
	var answered bool
	var reason, by string
	for _, f := range frames {
		if f["id"] == float64(id) {
			answered = f["result"] != nil
		}
		if f["method"] == sdk.NotifySessionEvent {
			ev, _ := params(f)["event"].(map[string]any)
			if ev["type"] == "turn/end" {
				d, _ := ev["data"].(map[string]any)
				reason, _ = d["reason"].(string)
				by, _ = d["by"].(string)
			}
		}
	}
	if !answered || reason != "aborted" || by != "user" || params(status)["stopReason"] != "aborted" {
		t.Errorf("cancel answered %v, turn end %s by %s, status %v", answered, reason, by, status)
	}
}

// Events of child sessions are streamed too, and subagent/started and
// subagent/finished are derived from the parent's log.
func TestSubagentNotifications(t *testing.T) {
	c, _ := newConn(t, `
replies:
  - match: delegate
    toolCalls:
      - {id: c1, name: subagent, arguments: {description: child work, prompt: CHILD-TASK}}
  - {match: CHILD-TASK, text: child answer}
  - {match: child answer, text: parent done}
`)
	c.initialize()
	sid, msg := c.prompt("", "delegate this")
	frames := c.until(isIdle(msg))
	var started, finished map[string]any
	childEvents := 0
	for _, f := range frames {
		switch f["method"] {
		case sdk.NotifySubagentStarted:
			started = params(f)
		case sdk.NotifySubagentFinished:
			finished = params(f)
		case sdk.NotifySessionEvent:
			if p := params(f); p["sessionId"] != sid {
				childEvents++
			}
		}
	}
	if started == nil || finished == nil {
		t.Fatalf("started %v finished %v", started, finished)
	}
	child := started["childSessionId"]
	if started["parentSessionId"] != sid || child == "" || finished["childSessionId"] != child || finished["parentSessionId"] != sid {
		t.Errorf("started %v finished %v", started, finished)
	}
	lam, _ := json.Marshal(finished["lastAssistantMessage"])
	if finished["stopReason"] != "completed" || string(lam) != `{"content":[{"text":"child answer","type":"text"}],"role":"assistant"}` {
		t.Errorf("finished %v", finished)
	}
	if childEvents == 0 {
		t.Error("no event of the child session was streamed")
	}
	if out, _ := json.Marshal(params(last(frames))["output"]); string(out) != `[{"text":"parent done","type":"text"}]` {
		t.Errorf("output %s", out)
	}
}

// shutdown answers {} and ends a running turn as its parent; stdin EOF
// also ends the server.
func TestShutdownWhileRunning(t *testing.T) {
	c, srv := newConn(t, `
replies:
  - {match: stall, fault: stall}
`)
	c.initialize()
	c.prompt("", "stall please")
	for srv.InFlight() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	id := c.request(sdk.MethodShutdown, struct{}{})
	var answered bool
	var by string
	for f := range c.frames {
		if f["id"] == float64(id) {
			answered = f["result"] != nil
		}
		if f["method"] == sdk.NotifySessionEvent {
			ev, _ := params(f)["event"].(map[string]any)
			if ev["type"] == "turn/end" {
				d, _ := ev["data"].(map[string]any)
				by, _ = d["by"].(string)
			}
		}
	}
	if !answered || by != "parent" {
		t.Errorf("shutdown answered %v, turn ended by %q", answered, by)
	}
}

func TestStdinEOF(t *testing.T) {
	c, _ := newConn(t, toolScript)
	c.initialize()
	c.in.Close()
	for range c.frames {
	}
}

// Leftovers finds a marked process (and so can fail a test that leaks one).
func TestLeftoversFindsMarkedProcess(t *testing.T) {
	mark := sdkfake.NewMark(t.Name())
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), sdkfake.EnvMark+"="+mark)
	if err := cmd.Start(); err != nil {
		t.Fatal("starting sleep:", err)
	}
	found := false
	for i := 0; i < 500 && !found; i++ { // until the exec has happened
		for _, pid := range sdkfake.Leftovers(mark) {
			found = found || pid == cmd.Process.Pid
		}
		if !found {
			time.Sleep(10 * time.Millisecond)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	if !found {
		t.Fatal("Leftovers did not find the marked process")
	}
	if pids := sdkfake.Leftovers(mark); len(pids) != 0 {
		t.Errorf("Leftovers after kill: %v", pids)
	}
}

// In an untrusted cwd the runtime ignores the project's files and says so
// on its stderr and in the host log, once, at initialize.
func TestInitializeReportsUntrustedFiles(t *testing.T) {
	cwd, home := workspace(t)
	os.MkdirAll(filepath.Join(cwd, ".reins", "agents"), 0o755)
	os.WriteFile(filepath.Join(cwd, ".reins", "agents", "helper.md"), []byte("---\nprovider: acp\ncommand: sh\n---\n"), 0o644)
	var stderr syncBuffer
	c := serve(t, sdkserver.Config{Home: home, Cwd: cwd, Model: "mock/echo", Getenv: func(string) string { return "" }, Stderr: &stderr})
	c.initialize()
	want := "untrusted folder " + cwd + ": ignoring .reins/agents/helper.md"
	if got := stderr.String(); strings.Count(got, "untrusted") != 1 || !strings.Contains(got, want) {
		t.Errorf("stderr %q, want one line with %q", got, want)
	}
	hostLog, _ := os.ReadFile(filepath.Join(home, "logs", "reins.log"))
	if !strings.Contains(string(hostLog), want) {
		t.Errorf("host log %q lacks %q", hostLog, want)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

const providerCanary = "SDK-PROVIDER-CANARY-9b2e"

// TestFailedTurnErrorData (issue 15): the idle status of a run whose turn
// ended with a provider's error answer carries error {code, message, data},
// data the human message with the provider's own text and the host log's
// path. The text is in no session/event (nor any other frame) and in no
// file but the host log.
func TestFailedTurnErrorData(t *testing.T) {
	url, _ := mockServer(t, `
replies:
  - {match: fine, text: ok}
fallback:
  status: 401
  body: '{"error":{"message":"bad key `+providerCanary+`"}}'
`)
	cwd, home := workspace(t)
	c := serve(t, sdkserver.Config{Home: home, Cwd: cwd, Model: "openai/test", BaseURL: url, Getenv: func(string) string { return "" }})
	c.initialize()
	sid, msg := c.prompt("", "fine")
	if p := params(last(c.until(isIdle(msg)))); p["stopReason"] != "completed" || p["error"] != nil {
		t.Errorf("a completed run's idle status %v", p)
	}
	_, msg = c.prompt(sid, "hello")
	frames := c.until(isIdle(msg))
	p := params(last(frames))
	want := map[string]any{
		"code": "AUTH", "message": "turn ended with AUTH",
		"data": "AUTH; the provider said (HTTP 401: bad key " + providerCanary + "); details in " + filepath.Join(home, "logs", "reins.log"),
	}
	if p["stopReason"] != "error" || fmt.Sprint(p["error"]) != fmt.Sprint(want) {
		t.Errorf("idle status %v, want error %v", p, want)
	}
	for _, f := range frames[:len(frames)-1] {
		if b, _ := json.Marshal(f); bytes.Contains(b, []byte(providerCanary)) {
			t.Errorf("frame %s carries the provider's text", b)
		}
	}
	c.in.Close()
	for range c.frames {
	}
	testutil.CanaryOnlyInHostLog(t, home, providerCanary)
}

// session/prompt on a child session id continues that child (issue 16):
// the runtime releases the child its parent keeps and loads its session
// from its log, with the child's whole conversation; an id this runtime
// has no log for stays unknown.
func TestPromptChildSession(t *testing.T) {
	c, srv := newConn(t, `
replies:
  - match: delegate
    toolCalls:
      - {id: c1, name: subagent, arguments: {description: child work, prompt: CHILD-TASK}}
  - {match: CHILD-TASK, text: child answer}
  - {match: child answer, text: parent done}
  - {match: CHILD-FOLLOW-UP, text: child follow-up answer}
`)
	c.initialize()
	_, msg := c.prompt("", "delegate this")
	var child string
	for _, f := range c.until(isIdle(msg)) {
		if f["method"] == sdk.NotifySubagentStarted {
			child, _ = params(f)["childSessionId"].(string)
		}
	}
	if child == "" {
		t.Fatal("no subagent/started")
	}
	sid, msg := c.prompt(child, "CHILD-FOLLOW-UP")
	if sid != child {
		t.Fatalf("prompt answered session %q, want the child %q", sid, child)
	}
	frames := c.until(isIdle(msg))
	if out, _ := json.Marshal(params(last(frames))["output"]); string(out) != `[{"text":"child follow-up answer","type":"text"}]` {
		t.Errorf("output %s", out)
	}
	reqs := srv.Requests()
	body := string(reqs[len(reqs)-1].Body)
	if i, j := strings.Index(body, "CHILD-TASK"), strings.Index(body, "CHILD-FOLLOW-UP"); i < 0 || j < i || !strings.Contains(body, "child answer") {
		t.Errorf("the child's follow-up request lacks its earlier turn: %s", body)
	}
	id := c.request(sdk.MethodSessionPrompt, sdk.PromptParams{SessionID: "20260101-000000-00000000", Content: []sdk.Block{{Type: "text", Text: "x"}}})
	if code := errCode(last(c.until(isResponse(id)))); code != sdk.CodeInvalidParams {
		t.Errorf("an unknown session: code %d", code)
	}
}
