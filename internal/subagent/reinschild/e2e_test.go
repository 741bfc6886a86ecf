package reinschild_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/sdkserver/sdkfake"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// parent is a harness session whose model is a scripted server over real
// HTTP, in a workspace with agent definitions.
type parent struct {
	h    *harness.Harness
	s    *harness.Session
	srv  *mock.Server
	home string
	cwd  string
	mark string
}

func newParent(t *testing.T, script string, agents map[string]string) *parent {
	t.Helper()
	return newParentOpts(t, script, agents, harness.SessionOptions{})
}

// newParentOpts is newParent with the parent session's options (its tool
// allowlist, permission mode and limits); Model and System are set here.
func newParentOpts(t *testing.T, script string, agents map[string]string, opts harness.SessionOptions) *parent {
	t.Helper()
	sc, err := mock.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	url, srv, stop := mock.StartTest(sc)
	t.Cleanup(stop)
	p := &parent{srv: srv, home: t.TempDir(), cwd: t.TempDir(), mark: sdkfake.NewMark(t.Name())}
	files := map[string]string{
		"hello.txt":          "hi\n",
		".reins/config.yaml": "providers:\n  openai:\n    retry: {maxRetries: 0, initialDelay: 1ms, maxDelay: 1ms, jitter: 0}\n",
	}
	for name, body := range agents {
		body = strings.NewReplacer("$HOME", p.home, "$MARK", p.mark, "$CANARY", canary).Replace(body)
		files[".reins/agents/"+name+".md"] = body
	}
	for name, body := range files {
		path := filepath.Join(p.cwd, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Trust(t, p.home, p.cwd) // its agent files; the child reins shares the home
	p.h, err = harness.New(harness.Options{Home: p.home, Cwd: p.cwd, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	m, err := p.h.ResolveModel("openai/test", url)
	if err != nil {
		t.Fatal(err)
	}
	opts.Model, opts.System = m, "parent system prompt"
	p.s, err = p.h.NewSession(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.s.Close()
		p.h.Close()
		noLeftovers(t, p.mark)
	})
	return p
}

func (p *parent) events(t *testing.T) []session.Event {
	t.Helper()
	p.s.Log.Flush()
	ld, err := session.Load(p.s.Log.Path())
	if err != nil {
		t.Fatal(err)
	}
	return ld.Events
}

// The real runtime as a child: the agent names no command, so the child is
// this (test) executable — the running reins — with args ["sdk"]; its env
// makes the test binary serve the runtime. The parent's tool result carries
// the child's answer; the child's session sits in the tree under the
// parent.
const realChildAgent = `---
name: helper
description: a reins child
provider: reins
env:
  REINS_TEST_AS_SDK: "1"
  REINS_HOME: $HOME
  REINS_TEST_MARK: $MARK
---
You are a careful helper.
`

func TestParentDelegatesToRealRuntime(t *testing.T) {
	p := newParent(t, `
replies:
  - match: delegate-now
    toolCalls:
      - {id: p1, name: subagent, arguments: {description: ask the child, agent: helper, prompt: "CHILD-TASK list the files"}}
  - match: CHILD-TASK
    toolCalls:
      - {id: c1, name: ls, arguments: {}}
  - match: hello.txt
    text: the child saw hello.txt
  - match: the child saw
    text: parent done
`, map[string]string{"helper": realChildAgent})
	res := p.s.Run(context.Background(), "delegate-now")
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn %+v", res)
	}
	events := p.events(t)
	results := testutil.Decoded[session.ToolResult](t, events, session.TypeToolResult)
	if len(results) != 1 || testutil.NoChildLine(results[0].Content) != "the child saw hello.txt" || results[0].IsError {
		t.Fatalf("parent tool results %+v", results)
	}
	starts := testutil.Decoded[session.SubagentStart](t, events, session.TypeSubagentStart)
	ends := testutil.Decoded[session.SubagentEnd](t, events, session.TypeSubagentEnd)
	if len(starts) != 1 || len(ends) != 1 || starts[0].Provider != "reins" || ends[0].StopReason != "completed" ||
		ends[0].LastAssistantMessage == nil || ends[0].LastAssistantMessage.Text() != "the child saw hello.txt" || ends[0].Diagnostic != "" {
		t.Fatalf("subagent events %+v %+v", starts, ends)
	}
	if ends[0].Usage == nil || ends[0].Usage.InputTokens == 0 {
		t.Errorf("child usage not reported: %+v", ends[0].Usage)
	}
	child, err := session.Load(filepath.Join(p.home, "sessions", starts[0].ChildSession, session.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if child.Header.ParentSession != p.s.Log.Header().ID || child.Header.DelegationDepth != 1 || child.Header.Origin != session.OriginSubagent || child.Header.Cwd != p.cwd {
		t.Errorf("child header %+v", child.Header)
	}
	// The child ran with the agent definition's system prompt.
	reqs := p.srv.Requests()
	if len(reqs) != 4 || !strings.Contains(string(reqs[1].Body), "You are a careful helper.") {
		t.Errorf("child request %d: %s", len(reqs), reqs[1].Body)
	}
}

// The leak test through a parent: children that write a canary to stderr,
// into error messages and into protocol payloads. The canary reaches no
// tool result, diagnostic or session event — only the host log.
func TestCanaryStaysInTheHostLog(t *testing.T) {
	agent := func(name, scenario string) string {
		return `---
name: ` + name + `
description: a failing reins child
provider: reins
env:
  REINS_FAKE_SDK: "` + scenario + `"
  REINS_FAKE_CANARY: $CANARY
  REINS_FAKE_GRANDCHILD: "1"
  REINS_TEST_MARK: $MARK
---
`
	}
	p := newParent(t, `
replies:
  - match: fan-out
    toolCalls:
      - {id: a, name: subagent, arguments: {description: crash, agent: crasher, prompt: task one}}
      - {id: b, name: subagent, arguments: {description: error turn, agent: erring, prompt: task two}}
      - {id: c, name: subagent, arguments: {description: bad init, agent: refuser, prompt: task three}}
      - {id: d, name: subagent, arguments: {description: odd reason, agent: odd, prompt: task four}}
  - match: Error
    text: parent done
`, map[string]string{
		"crasher": agent("crasher", sdkfake.ScenarioCrashExit),
		"erring":  agent("erring", "turn:error"),
		"refuser": agent("refuser", sdkfake.ScenarioErrorInit),
		"odd":     agent("odd", "turn:weird"),
	})
	res := p.s.Run(context.Background(), "fan-out")
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn %+v", res)
	}
	results := testutil.Decoded[session.ToolResult](t, p.events(t), session.TypeToolResult)
	want := []string{
		"Error: subagent run failed\nDiagnostic: " + line("session-run", "transport", "error", "exit code: 3") + "\nPartial output before the run ended:\npartial answer",
		"Error: subagent run failed\nDiagnostic: " + line("session-run", "child-error", "error") + "\nPartial output before the run ended:\npartial answer",
		"Error: subagent run failed\nDiagnostic: " + line("initialize", "protocol", "error"),
		"Error: subagent run failed\nDiagnostic: " + line("session-run", "child-unknown", "error") + "\nPartial output before the run ended:\npartial answer",
	}
	if len(results) != len(want) {
		t.Fatalf("tool results %+v", results)
	}
	for i, r := range results {
		if testutil.NoChildLine(r.Content) != want[i] || !r.IsError {
			t.Errorf("tool result %d:\n%s\nwant\n%s", i, r.Content, want[i])
		}
	}
	p.s.Close()
	p.h.Close()
	testutil.CanaryOnlyInHostLog(t, p.home, canary)
}

// TestKilledChildLogAgreesWithParent (issue 13, finding 5): a reins child
// killed mid-stream has the text it streamed in its own log, and that text
// is what the parent's subagent/end reports — the child's log is never
// behind what the parent was told.
func TestKilledChildLogAgreesWithParent(t *testing.T) {
	p := newParent(t, `
replies:
  - match: delegate-now
    toolCalls:
      - {id: p1, name: subagent, arguments: {description: ask the child, agent: helper, prompt: "CHILD-TASK tell a long story"}}
  - match: CHILD-TASK
    text: "Once upon a time, far away, a child streamed a story that was never going to end in time."
    chunk: 8
    chunkDelay: 2s
  - match: Error
    text: parent done
`, map[string]string{"helper": realChildAgent})
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.s.Run(context.Background(), "delegate-now")
	}()
	// Wait for streamed text in the child's log on disk, then kill the
	// child while its model is still streaming.
	var childLog string
	// The child streams a chunk every 2 s for 20 s: it is still streaming
	// when the deadline gives up on its log.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m, _ := filepath.Glob(filepath.Join(p.home, "sessions", "*", session.FileName)); len(m) > 0 {
			for _, path := range m {
				if path == p.s.Log.Path() {
					continue
				}
				childLog = path
				if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(`"delta":"Once upo"`)) {
					deadline = time.Time{}
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !deadline.IsZero() {
		t.Errorf("the child's streamed text never reached its log")
	}
	pids := sdkfake.Leftovers(p.mark)
	if len(pids) == 0 {
		t.Fatal("no child process to kill")
	}
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the parent did not settle after its child was killed")
	}
	ends := testutil.Decoded[session.SubagentEnd](t, p.events(t), session.TypeSubagentEnd)
	if len(ends) != 1 || ends[0].LastAssistantMessage == nil {
		t.Fatalf("subagent/end %+v: want the child's partial text", ends)
	}
	told := ends[0].LastAssistantMessage.Text()
	child, err := session.Load(childLog)
	if err != nil {
		t.Fatalf("the killed child's log does not load: %v", err)
	}
	var fold outcome.Fold
	for _, e := range child.Events {
		fold.Push(e)
	}
	logged := llm.BlocksText(fold.Collect())
	if told == "" || logged != told {
		t.Errorf("the parent was told the child streamed %q; the child's log holds %q", told, logged)
	}
}
