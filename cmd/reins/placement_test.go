package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/engine"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/testutil"
	"github.com/reinsdev/reins/internal/tool"
)

// placementKind is where a row's children run.
type placementKind string

const (
	placeInProcess placementKind = "inprocess"
	placeReins     placementKind = "reins"
	placeACP       placementKind = "acp"
	placePi        placementKind = "pi"
	placeTemporal  placementKind = "temporal"
)

// placementCap is the parent's subagents.maxResultBytes in every row:
// above the tool registry's own 50 KiB, where a second cut used to lose
// the marker and the child line (issue 28).
const placementCap = 64 << 10

// placementAnswers are the sizes (KiB) of the children's answers in the
// cap check: two kept whole (50 KiB plus the child line is over the
// registry's 50 KiB), two paged.
var placementAnswers = []int{32, 50, 70, 200}

// answerOf is a child's answer of kib KiB: lines "%07d\n". The ACP child
// (acpchild/testdata/child.mjs, scenario placement) makes the same bytes.
func answerOf(kib int) string {
	var b strings.Builder
	for i := range kib * 128 {
		fmt.Fprintf(&b, "%07d\n", i)
	}
	return b.String()
}

// placementScript is the children's model in every row that has one (all
// but ACP): one HTTP endpoint, so a row can see what its child asked.
// CANCEL-ME answers EARLIER-COMPLETE with a read of stall.txt (whose text
// is STALL-NOW); the next step streams LATE-PARTIAL... slowly.
func placementScript() *mock.Script {
	sc := &mock.Script{Replies: []mock.Reply{
		{Match: "CANCEL-ME", Text: "EARLIER-COMPLETE", Repeat: true,
			ToolCalls: []mock.ToolCall{{ID: "read-1", Name: "read", Arguments: json.RawMessage(`{"path":"stall.txt"}`)}}},
		// The mock waits ChunkDelay before every chunk but the first (the
		// role's): the partial text comes in 16-byte pieces, one every
		// 200 ms, for 10 minutes.
		{Match: "STALL-NOW", Text: "LATE-PARTIAL... " + strings.Repeat("still streaming ", 3000), Chunk: 16, ChunkDelay: mock.Duration(200 * time.Millisecond), Repeat: true},
		{Match: "FORK-TASK", Text: "forked", Repeat: true},
	}}
	for _, kib := range placementAnswers {
		sc.Replies = append(sc.Replies, mock.Reply{Match: fmt.Sprintf("ANSWER-%d.", kib), Text: answerOf(kib), Chunk: 8192, Repeat: true})
	}
	return sc
}

// placementRow is one row of TestPlacementContract: a parent session
// whose children (of agent) run at one placement, on the scripted model
// srv (no model for ACP).
type placementRow struct {
	kind     placementKind
	agent    string // "" is the built-in general agent
	canFork  bool
	sess     *harness.Session
	srv      *mock.Server
	cwd      string
	childEnv string // the mark of the row's child processes
	// waiting blocks until the cancel check's child streams its later
	// step (its partial text reached the child, or the ACP child's ready
	// file: after EARLIER-COMPLETE it waits for the cancel);
	// stopped until the cancel reached it there (the model's stalled
	// answer was dropped, or the ACP child saw session/cancel).
	waiting, stopped func(t *testing.T)
	observe          func(session.Header, session.Event)
}

// logsHold reports whether a session log under one of homes holds s.
func logsHold(homes []string, s string) bool {
	for _, h := range homes {
		logs, _ := filepath.Glob(filepath.Join(h, "sessions", "*", session.FileName))
		for _, l := range logs {
			if b, err := os.ReadFile(l); err == nil && bytes.Contains(b, []byte(s)) {
				return true
			}
		}
	}
	return false
}

// newPlacementRow is the one setup of every placement: the model
// endpoint, the workspace (stall.txt, the agent file, config), the parent
// session and, for temporal, the dev server and a worker that serves it.
func newPlacementRow(t *testing.T, kind placementKind) *placementRow {
	t.Helper()
	url, srv, stop := mock.StartTest(placementScript())
	t.Cleanup(stop)
	r := &placementRow{kind: kind, srv: srv, cwd: t.TempDir(), canFork: kind == placeInProcess || kind == placeTemporal}
	home := t.TempDir()
	// The row's child processes carry a mark below the row's: none may be
	// alive after a run (checked after the cancel), nor after the row.
	r.childEnv = strings.TrimPrefix(testutil.MarkChildren(t), testutil.MarkEnv+"=") + "/child"
	write := func(name, body string) {
		p := filepath.Join(r.cwd, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("stall.txt", "STALL-NOW\n")
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	subagents := "subagents:\n"
	var stopServer func()
	if kind == placeTemporal {
		cfg, stopServer = temporalSetup(t)
		subagents = ""
	}
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "%s  maxResultBytes: %d\nproviders:\n  openai:\n    retry: {maxRetries: 0, initialDelay: 1ms, maxDelay: 1ms, jitter: 0}\n", subagents, placementCap)
	f.Close()
	// The cut step's partial text has reached the child once a session
	// log of a child holds it (in-process, reins and temporal children
	// log it within the log's group commit) or an out-of-process child's
	// live events carried it (pi, reins): only then does the cancel cut a
	// step that streamed, seed 000's case.
	homes := []string{home}
	var partial atomic.Bool
	r.observe = func(_ session.Header, e session.Event) {
		if bytes.Contains(e.Data, []byte("LATE-PARTIAL")) {
			partial.Store(true)
		}
	}
	r.waiting = func(t *testing.T) {
		waitFor(t, "the cut step's partial text at the child", func() bool {
			return partial.Load() || logsHold(homes, "LATE-PARTIAL")
		})
	}
	r.stopped = func(t *testing.T) {
		waitFor(t, "end of the stalled model request", func() bool { return srv.InFlight() == 0 })
	}

	switch kind {
	case placeReins:
		// The real `reins sdk`: the running executable (this test binary
		// as reins) with args [sdk].
		r.agent = "reinschild"
		write(".reins/agents/reinschild.md", fmt.Sprintf("---\nname: reinschild\ndescription: a reins child\nprovider: reins\nenv:\n"+
			"  REINS_AS_MAIN: \"1\"\n  REINS_HOME: %q\n  %s: %q\n---\nYou are a reins child.\n", home, testutil.MarkEnv, r.childEnv))
	case placeACP:
		nm := testutil.Peers(t)
		// In the workspace: the sandboxed child writes nowhere else.
		ready := filepath.Join(r.cwd, "acp-ready")
		r.agent = "acpchild"
		write(".reins/agents/acpchild.md", fmt.Sprintf("---\nname: acpchild\ndescription: an ACP child\nprovider: acp\ncommand: node\nargs: [%q]\nenv:\n"+
			"  ACP_SDK_PATH: %q\n  ACP_SCENARIO: placement\n  ACP_READY_FILE: %q\n  %s: %q\n---\nUnused: an ACP child has its own prompt.\n",
			filepath.Join(testutil.RepoRoot(t), "internal", "subagent", "acpchild", "testdata", "child.mjs"),
			filepath.Join(nm, "@agentclientprotocol", "sdk", "dist", "v1", "stable", "acp.js"), ready, testutil.MarkEnv, r.childEnv))
		r.waiting = func(t *testing.T) {
			waitFor(t, "the ACP child's ready file", func() bool { _, err := os.Stat(ready); return err == nil })
		}
		r.stopped = func(t *testing.T) {
			waitFor(t, "the ACP child's session/cancel", func() bool { _, err := os.Stat(ready + ".cancelled"); return err == nil })
		}
	case placePi:
		// The real pi from npm, offline, on this row's model endpoint.
		// pi's text deltas reach neither a reins log nor the live stream
		// (only its complete messages do), so the cancel comes once pi
		// asked for the stalled step: its partial may or may not have
		// arrived; either way the earlier message is the answer.
		r.waiting = func(t *testing.T) {
			waitFor(t, "pi's request for the stalled step", func() bool {
				for _, q := range srv.Requests() {
					if strings.Contains(q.Last, "STALL-NOW") {
						return true
					}
				}
				return false
			})
		}
		nm := testutil.Peers(t)
		piDir := t.TempDir()
		models, _ := json.Marshal(map[string]any{"providers": map[string]any{"reins-mock": map[string]any{
			"baseUrl": url + "/v1", "api": "openai-completions", "apiKey": "mock-key",
			"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
			"models": []any{map[string]any{"id": "mock-model"}},
		}}})
		if err := os.WriteFile(filepath.Join(piDir, "models.json"), models, 0o644); err != nil {
			t.Fatal(err)
		}
		r.agent = "pichild"
		write(".reins/agents/pichild.md", fmt.Sprintf("---\nname: pichild\ndescription: a pi child\nprovider: pi\nmodel: reins-mock/mock-model\ntools: read\nenv:\n"+
			"  PI_CODING_AGENT_DIR: %q\n  PI_OFFLINE: \"1\"\n  HOME: %q\n  PATH: %q\n  %s: %q\n---\nYou are a pi child.\n",
			piDir, piDir, filepath.Join(nm, ".bin")+":"+os.Getenv("PATH"), testutil.MarkEnv, r.childEnv))
	case placeTemporal:
		// The children run in-process on a real worker, whose model is
		// this row's endpoint.
		w := startWorker(t, cfg, "", "--base-url", url)
		homes = append(homes, w.home)
		// Registered after the worker's and the server's process checks,
		// so it runs before them: the worker first, then the server.
		t.Cleanup(func() { w.stop(); stopServer() })
	}
	testutil.Trust(t, home, r.cwd)
	h, err := harness.New(harness.Options{Home: home, Cwd: r.cwd, ConfigFile: cfg, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	h.ObserveRemote = r.observe
	m, err := h.ResolveModel("openai/test", url)
	if err != nil {
		t.Fatal(err)
	}
	r.sess, err = h.NewSession(harness.SessionOptions{Model: m, MaxSteps: 30})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.sess.Close() })
	if kind == placeTemporal {
		eng, closeEng, err := engine.Open(h.Config.Subagents, "openai/test", h.Logf)
		if err != nil {
			t.Fatal(err)
		}
		r.sess.Subagents.Engine = eng
		t.Cleanup(closeEng)
	}
	return r
}

// waitFor polls cond until it holds, failing after a bound far above
// any healthy run (the load of a shared machine included).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 3 minutes", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// delegate runs the subagent tool through the real tool registry (whose
// own cap is 50 KiB), as the parent's model calls it.
func (r *placementRow) delegate(ctx context.Context, args map[string]any) tool.Result {
	if r.agent != "" {
		args["agent"] = r.agent
	}
	args["description"] = "placement check"
	raw, _ := json.Marshal(args)
	reg := tool.NewRegistry(r.sess.Subagents.Tools()...)
	return reg.Run(ctx, &tool.Env{Workspace: r.cwd, Permission: tool.ReadOnly}, "subagent", raw)
}

// withChildID is content with its child id (child-xxxxxxxx) read back, or
// fails the test.
func withChildID(t *testing.T, content string) string {
	t.Helper()
	m := childLine.FindAllStringSubmatch(content, -1)
	if len(m) == 0 {
		t.Fatalf("no child line in the result; tail %q", content[max(0, len(content)-300):])
	}
	return m[len(m)-1][1]
}

// TestPlacementContract is issue 28's acceptance 2: one table of the
// subagent contract's checks, each run at every placement — in-process,
// a reins child (the real `reins sdk`), an ACP child (the TypeScript SDK's
// agent side), pi (the real pi from npm, offline) and the temporal engine
// (the real dev server and `reins worker`) — with the same expected bytes
// on every row:
//   - cap: answers of 32, 50, 70 and 200 KiB under maxResultBytes 64 KiB
//     come back whole or paged (SPEC §6: the marker and the child line
//     always survive, nothing cuts them again);
//   - fork after a compaction: the forked child's model sees the task, the
//     summary and the tail, never what the summary replaced; a placement
//     that cannot fork refuses with the fixed error and asks no model;
//   - cancel: cancelling the parent's run while the child streams a later
//     step ends the child aborted with its earlier complete message (seed
//     000's rule), no diagnostic (a local cancel); the cancel reaches the
//     child (its model request is dropped, the ACP child sees
//     session/cancel), and once the parent's session closes no child
//     process is left.
func TestPlacementContract(t *testing.T) {
	for _, kind := range []placementKind{placeInProcess, placeReins, placeACP, placePi, placeTemporal} {
		t.Run(string(kind), func(t *testing.T) {
			t0 := time.Now()
			r := newPlacementRow(t, kind)
			t.Run("cap", func(t *testing.T) { r.checkCap(t) })
			t.Run("fork-after-compaction", func(t *testing.T) { r.checkFork(t) })
			t.Run("cancel", func(t *testing.T) { r.checkCancel(t) })
			t.Logf("%s: %s", kind, time.Since(t0).Round(time.Millisecond))
		})
	}
}

func (r *placementRow) checkCap(t *testing.T) {
	for _, kib := range placementAnswers {
		res := r.delegate(t.Context(), map[string]any{"prompt": fmt.Sprintf("ANSWER-%d.", kib)})
		id := withChildID(t, res.Content)
		ans := answerOf(kib)
		want := ans
		if len(ans) > placementCap {
			want = ans[:placementCap] + fmt.Sprintf("\n[output truncated: bytes 0-%d of %d shown; read the rest with subagent_output {\"child\":%q,\"offset\":%d}. The full output is in the child's session log.]",
				placementCap, len(ans), id, placementCap)
		}
		want += "\nchild: " + id
		if res.IsError || res.Content != want {
			t.Errorf("%d KiB answer: error %v, %d bytes, want %d; tail %q", kib, res.IsError, len(res.Content), len(want), res.Content[max(0, len(res.Content)-300):])
		}
	}
}

func (r *placementRow) checkFork(t *testing.T) {
	say := func(role llm.Role, s string) llm.Message {
		return llm.Message{Role: role, Content: []llm.Block{{Type: llm.BlockText, Text: s}}}
	}
	app := func(typ string, d any) session.Event {
		e, err := r.sess.Log.Append(typ, d)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	app(session.TypeUserMessage, session.UserMessage{Message: say(llm.RoleUser, "TASK-FIRST")})
	app(session.TypeAssistantMessage, session.AssistantMessage{Message: say(llm.RoleAssistant, "ACK-FIRST")})
	a := app(session.TypeUserMessage, session.UserMessage{Message: say(llm.RoleUser, "OLD-SECRET")})
	b := app(session.TypeAssistantMessage, session.AssistantMessage{Message: say(llm.RoleAssistant, "OLD-ANSWER")})
	app(session.TypeContextCompacted, session.ContextCompacted{Summary: "SUMMARY-OF-OLD", Replaces: session.SeqRange{FromSeq: a.Seq, ToSeq: b.Seq}})
	app(session.TypeUserMessage, session.UserMessage{Message: say(llm.RoleUser, "NEW-AFTER")})

	res := r.delegate(t.Context(), map[string]any{"prompt": "FORK-TASK", "fork": true})
	var asked []string
	for _, q := range r.srv.Requests() {
		if strings.Contains(q.Last, "FORK-TASK") {
			asked = append(asked, string(q.Body))
		}
	}
	if !r.canFork {
		want := fmt.Sprintf("Error: agent %q uses provider %s: %s", r.agent, r.kind, subagent.ErrForkProvider)
		if !res.IsError || res.Content != want || len(asked) != 0 {
			t.Errorf("fork at %s: %q (error %v, %d model requests), want the refusal %q and none", r.kind, res.Content, res.IsError, len(asked), want)
		}
		return
	}
	if id := withChildID(t, res.Content); res.IsError || res.Content != "forked\nchild: "+id {
		t.Fatalf("fork: %q (error %v)", res.Content, res.IsError)
	}
	if len(asked) != 1 {
		t.Fatalf("%d model requests for the fork, want 1", len(asked))
	}
	for _, s := range []string{"TASK-FIRST", "ACK-FIRST", "SUMMARY-OF-OLD", "NEW-AFTER"} {
		if !strings.Contains(asked[0], s) {
			t.Errorf("the fork's model request lacks %s", s)
		}
	}
	for _, s := range []string{"OLD-SECRET", "OLD-ANSWER"} {
		if strings.Contains(asked[0], s) {
			t.Errorf("the fork's model request holds %s, which the compaction replaced", s)
		}
	}
}

func (r *placementRow) checkCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan tool.Result, 1)
	go func() { done <- r.delegate(ctx, map[string]any{"prompt": "CANCEL-ME"}) }()
	r.waiting(t)
	cancel()
	var res tool.Result
	select {
	case res = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the cancelled child did not settle in 3 minutes")
	}
	id := withChildID(t, res.Content)
	want := "Error: subagent run was cancelled\nPartial output before the run ended:\nEARLIER-COMPLETE\nchild: " + id
	if !res.IsError || res.Content != want {
		t.Errorf("cancelled child: %q (error %v), want %q", res.Content, res.IsError, want)
	}
	// The parent's log records the same outcome.
	if err := r.sess.Log.Flush(); err != nil {
		t.Fatal(err)
	}
	ld, err := session.Load(r.sess.Log.Path())
	if err != nil {
		t.Fatal(err)
	}
	ends := testutil.Decoded[session.SubagentEnd](t, ld.Events, session.TypeSubagentEnd)
	if len(ends) == 0 {
		t.Fatal("no subagent/end in the parent's log")
	}
	if end := ends[len(ends)-1]; end.StopReason != "aborted" || end.Diagnostic != "" ||
		end.LastAssistantMessage == nil || llm.BlocksText(end.LastAssistantMessage.Content) != "EARLIER-COMPLETE" {
		t.Errorf("subagent/end %s, diagnostic %q, last message %+v; want aborted, none, EARLIER-COMPLETE", end.StopReason, end.Diagnostic, end.LastAssistantMessage)
	}
	// The cancel reached the child where it waited: it was not merely
	// abandoned.
	r.stopped(t)
	// The parent's run ends with the cancel (reins run closes its
	// session): no child process may be left. A settled child may be kept
	// alive until then for a continuation (subagents.idleTimeout).
	r.sess.Close()
	if left := testutil.LeftBehind(r.childEnv, testutil.OrphanWait); len(left) > 0 {
		t.Errorf("%d child process(es) left after the cancelled run: %v", len(left), left)
	}
}
