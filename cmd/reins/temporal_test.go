package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// temporalSetup starts a real `temporal server start-dev` and writes a
// config that points reins at it, on a task queue of its own. The caller
// defers stop.
func temporalSetup(t *testing.T) (cfg string, stop func()) {
	t.Helper()
	useTemporalHelper(t)
	addr, stop := testutil.StartTemporal(t, testutil.MarkChildren(t))
	cfg = filepath.Join(t.TempDir(), "temporal.yaml")
	src := fmt.Sprintf("subagents:\n  engine: temporal\n  temporal: {address: %q, namespace: default, taskQueue: %q}\n  maxParallel: 20\n  maxBackgroundJobs: 20\n",
		addr, "q-"+strings.ReplaceAll(t.Name(), "/", "-"))
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, stop
}

// startWorker starts `reins worker` with its own REINS_HOME; children's
// model replies come from script (none: from the model the flags in
// extra name, e.g. --base-url).
type workerProc struct {
	cmd  *exec.Cmd
	home string
	done chan struct{}
	errb bytes.Buffer
}

func startWorker(t *testing.T, cfg, script string, extra ...string) *workerProc {
	t.Helper()
	w := &workerProc{home: t.TempDir(), done: make(chan struct{})}
	// The parents run in other temporary folders: the worker serves them all.
	w.cmd = reinsCmd(t, w.home, append([]string{"worker", "--config", cfg, "--parallel", "20", "--root", os.TempDir()}, extra...)...)
	if script != "" {
		w.cmd.Env = append(w.cmd.Env, "REINS_MOCK_SCRIPT="+script)
	}
	w.cmd.Stderr = &w.errb
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.cmd.Wait(); close(w.done) }()
	t.Cleanup(w.stop)
	return w
}

// stop ends the worker (SIGTERM, then SIGKILL); callers defer it so that
// it runs before MarkChildren's checks.
func (w *workerProc) stop() {
	w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(30 * time.Second):
		w.cmd.Process.Kill()
		<-w.done
	}
}

// sessions counts the session folders in the worker's REINS_HOME.
func (w *workerProc) sessions() int {
	ents, _ := os.ReadDir(filepath.Join(w.home, "sessions"))
	return len(ents)
}

// TestTemporalTwoWorkersOneKilled is acceptance 2 of issue 22: a parent
// on the temporal engine starts 20 background children; two real workers
// run them against a real dev server. One worker is killed with SIGKILL
// while its children run: Temporal notices (heartbeats stop) and runs them
// again on the other worker. Every job settles exactly once, completed,
// with the right output; no process is left (MarkChildren).
func TestTemporalTwoWorkersOneKilled(t *testing.T) {
	cfg, stopServer := temporalSetup(t)
	defer stopServer()
	// One scripted model for the parent and the children, whose children's
	// requests are held until the victim is killed: every child is then
	// mid-run on its worker when the kill comes, whatever the machine's
	// speed (a fixed delay let a busy machine finish the victim's children
	// before the kill, and the survivor had none to run again).
	var calls []mock.ToolCall
	for i := 1; i <= 20; i++ {
		calls = append(calls, mock.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "subagent",
			Arguments: json.RawMessage(fmt.Sprintf(`{"description": "child %d", "prompt": "child-task %d", "run_in_background": true}`, i, i))})
	}
	script := &mock.Script{Replies: []mock.Reply{
		{Match: "delegate-all", ToolCalls: calls},
		{Match: "child-task", Echo: true, Text: "mock: ", Repeat: true},
	}, Fallback: &mock.Reply{Text: "all done"}}
	msrv := mock.NewServer(script)
	gate := make(chan struct{})
	var gateOnce sync.Once
	openGate := func() { gateOnce.Do(func() { close(gate) }) }
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !bytes.Contains(body, []byte("delegate-all")) { // a child's request
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		msrv.ServeHTTP(w, r)
	}))
	defer hs.Close()
	defer openGate()

	w1 := startWorker(t, cfg, "", "--base-url", hs.URL)
	defer w1.stop()
	w2 := startWorker(t, cfg, "", "--base-url", hs.URL)
	defer w2.stop()

	parentHome := t.TempDir()
	parent := reinsCmd(t, parentHome, "run", "--config", cfg, "-m", "openai/test", "--base-url", hs.URL, "--json", "delegate-all")
	var pout, perr bytes.Buffer
	parent.Stdout, parent.Stderr = &pout, &perr
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	pdone := make(chan error, 1)
	go func() { pdone <- parent.Wait() }()
	defer func() { parent.Process.Kill() }()

	// Once all 20 children run (two sessions a child: the worker's
	// stand-in for the parent and the child's own; no child's model has
	// answered), kill the worker running more of them, then let the
	// models answer.
	deadline := time.Now().Add(90 * time.Second)
	for w1.sessions()+w2.sessions() < 40 {
		if time.Now().After(deadline) {
			t.Fatalf("the workers started %d sessions in 90 s, want 40\nw1: %s\nw2: %s\nparent: %s", w1.sessions()+w2.sessions(), w1.errb.Bytes(), w2.errb.Bytes(), perr.Bytes())
		}
		time.Sleep(20 * time.Millisecond)
	}
	victim, survivor := w1, w2
	if w2.sessions() > w1.sessions() {
		victim, survivor = w2, w1
	}
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-victim.done
	killedRuns := victim.sessions() / 2
	openGate()

	var err error
	select {
	case err = <-pdone:
	case <-time.After(180 * time.Second):
		t.Fatalf("the parent did not finish in 180 s\nstderr %s\nsurvivor %s", perr.Bytes(), survivor.errb.Bytes())
	}
	if err != nil {
		t.Fatalf("parent: %v\nstderr %s\nstdout %s", err, perr.Bytes(), pout.Bytes())
	}
	var res runResult
	if err := json.Unmarshal(pout.Bytes(), &res); err != nil || res.StopReason != "completed" {
		t.Fatalf("parent result %s (%v)", pout.Bytes(), err)
	}
	ld, err := session.Load(filepath.Join(parentHome, "sessions", res.SessionID, session.FileName))
	if err != nil {
		t.Fatal(err)
	}
	notices := checkJobsAccounted(t, ld)
	seen := map[string]int{}
	for _, n := range notices {
		seen[n.JobID]++
		if n.Status != "completed" {
			t.Errorf("job %s settled %s", n.JobID, n.Status)
		}
	}
	if len(seen) != 20 {
		t.Errorf("%d jobs settled, want 20", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("job %s settled %d times", id, n)
		}
	}
	outputs := map[string]bool{}
	for _, e := range ld.Events {
		if e.Type != session.TypeSubagentEnd {
			continue
		}
		var end session.SubagentEnd
		e.Decode(&end)
		if end.StopReason != "completed" || end.LastAssistantMessage == nil {
			t.Errorf("subagent/end %+v", end)
			continue
		}
		outputs[llm.BlocksText(end.LastAssistantMessage.Content)] = true
	}
	for i := 1; i <= 20; i++ {
		if want := fmt.Sprintf("mock: child-task %d", i); !outputs[want] {
			t.Errorf("no child answered %q", want)
		}
	}
	// The survivor ran its own children and all the killed worker's again.
	if got := survivor.sessions() / 2; got < 20 {
		t.Errorf("the surviving worker ran %d children; the killed one had started %d", got, killedRuns)
	}
	t.Logf("killed worker had started %d children; survivor ran %d", killedRuns, survivor.sessions()/2)
}

// A batch on the temporal engine whose cluster is down: each task settles
// error with the fixed engine-unavailable diagnostic (within
// subagents.startTimeout), nothing hangs, and the cluster's words stay in
// the host log.
func TestTemporalEngineUnavailable(t *testing.T) {
	useTemporalHelper(t)
	dir, home := t.TempDir(), t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	// Nothing listens on port 1.
	os.WriteFile(cfg, []byte("subagents:\n  engine: temporal\n  startTimeout: 2s\n  temporal: {address: '127.0.0.1:1'}\n"), 0o644)
	tasks := writeTasks(t, dir, 3)
	out := filepath.Join(dir, "r.jsonl")
	code, stderr := exitCode(t, reinsCmd(t, home, "batch", "--config", cfg, "-m", "mock/echo", "-o", out, tasks))
	if code != 1 || !strings.Contains(stderr, "3 of 3 tasks did not complete") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	want := "Subagent failure (provider: inprocess; stage: engine; category: engine-unavailable; stop reason: error)"
	for _, r := range readResults(t, out) {
		if r.StopReason != "error" || r.Diagnostic != want || r.Output != "" {
			t.Errorf("%+v, want error with %q", r, want)
		}
	}
}

// job_kill on the temporal engine cancels the workflow; the cancel reaches
// the child on the worker (through the activity's heartbeat) and ends it
// through its own teardown. The job settles killed, once, and the child's
// own log on the worker ends aborted.
func TestTemporalJobKill(t *testing.T) {
	cfg, stopServer := temporalSetup(t)
	defer stopServer()
	dir := t.TempDir()
	childScript := filepath.Join(dir, "child.yaml")
	os.WriteFile(childScript, []byte("replies:\n  - {match: child-task, fault: stall, repeat: true}\n"), 0o644)
	w := startWorker(t, cfg, childScript)
	defer w.stop()
	// The parent waits (a bash call) until the child runs on the worker —
	// its stand-in session and its own exist there — and then kills it.
	wait := fmt.Sprintf("for i in $(seq 1 1200); do [ $(ls %s/sessions 2>/dev/null | wc -l) -ge 2 ] && echo worker-ready && exit 0; sleep 0.05; done; echo worker-never-ready", w.home)
	parentScript := filepath.Join(dir, "parent.yaml")
	os.WriteFile(parentScript, []byte(fmt.Sprintf(`replies:
  - match: start-then-kill
    toolCalls:
      - {id: c1, name: subagent, arguments: {description: staller, prompt: child-task stall, run_in_background: true}}
  - match: Started background job
    toolCalls:
      - {id: c2, name: bash, arguments: {command: %q}}
  - match: worker-ready
    toolCalls:
      - {id: c3, name: job_kill, arguments: {id: job-1}}
fallback: {text: done}
`, wait)), 0o644)
	parentHome := t.TempDir()
	// --sandbox off: the sandbox gives the parent's bash a private, empty
	// /tmp, where the worker's REINS_HOME (a temporary folder) is not seen.
	parent := reinsCmd(t, parentHome, "run", "--config", cfg, "--sandbox", "off", "-m", "mock/echo", "--json", "start-then-kill")
	parent.Env = append(parent.Env, "REINS_MOCK_SCRIPT="+parentScript)
	var pout, perr bytes.Buffer
	parent.Stdout, parent.Stderr = &pout, &perr
	if err := parent.Run(); err != nil {
		t.Fatalf("parent: %v\n%s", err, perr.Bytes())
	}
	var res runResult
	if err := json.Unmarshal(pout.Bytes(), &res); err != nil || res.StopReason != "completed" {
		t.Fatalf("parent %s (%v)", pout.Bytes(), err)
	}
	ld, err := session.Load(filepath.Join(parentHome, "sessions", res.SessionID, session.FileName))
	if err != nil {
		t.Fatal(err)
	}
	notices := checkJobsAccounted(t, ld)
	if len(notices) != 1 || notices[0].Status != "killed" {
		for _, e := range ld.Events {
			if e.Type == session.TypeSubagentEnd {
				t.Logf("subagent/end %s", e.Data)
			}
		}
		w.stop()
		plog, _ := os.ReadFile(filepath.Join(parentHome, "logs", "reins.log"))
		wlog, _ := os.ReadFile(filepath.Join(w.home, "logs", "reins.log"))
		t.Logf("parent stderr:\n%s\nparent log:\n%s\nworker stderr:\n%s\nworker log:\n%s", perr.Bytes(), plog, w.errb.Bytes(), wlog)
		t.Fatalf("notices %+v, want job-1 killed once", notices)
	}
	// The child's own session on the worker ended aborted.
	aborted := false
	ents, _ := os.ReadDir(filepath.Join(w.home, "sessions"))
	for _, e := range ents {
		cl, err := session.Load(filepath.Join(w.home, "sessions", e.Name(), session.FileName))
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range cl.Events {
			var te session.TurnEnd
			if ev.Type == session.TypeTurnEnd && ev.Decode(&te) == nil && te.Reason == session.ReasonAborted {
				aborted = true
			}
		}
	}
	if !aborted {
		t.Errorf("no session on the worker ended aborted (%d sessions)", len(ents))
	}
}

// TestTemporalBatchKilledAndResumed is acceptance 3 on the temporal
// engine: 200 tasks through a real worker; task 120 stalls there, the
// batch is killed with SIGKILL after 119 results, and so is the worker.
// --resume, with a new worker, keeps the 119 and runs the rest: all 200
// results, in order, each once.
func TestTemporalBatchKilledAndResumed(t *testing.T) {
	cfg, stopServer := temporalSetup(t)
	defer stopServer()
	dir, home := t.TempDir(), t.TempDir()
	tasks := writeTasks(t, dir, 200, 120)
	stall := filepath.Join(dir, "stall.yaml")
	os.WriteFile(stall, []byte("replies:\n  - {match: stall, fault: stall, repeat: true}\nfallback: {echo: true, text: 'mock: '}\n"), 0o644)
	echo := filepath.Join(dir, "echo.yaml")
	os.WriteFile(echo, []byte("fallback: {echo: true, text: 'mock: '}\n"), 0o644)
	out := filepath.Join(dir, "results.jsonl")

	w1 := startWorker(t, cfg, stall)
	defer w1.stop()
	cmd := reinsCmd(t, home, "batch", "--config", cfg, "-m", "mock/echo", "--parallel", "8", "-o", out, tasks)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	defer func() { cmd.Process.Kill(); <-done }()
	deadline := time.Now().Add(120 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		if bytes.Count(b, []byte("\n")) >= 119 {
			break
		}
		select {
		case <-done:
			t.Fatalf("batch ended before the stall: %v\n%s", cmd.ProcessState, errb.Bytes())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("results never reached task 119: %d lines\n%s", bytes.Count(b, []byte("\n")), errb.Bytes())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
	w1.cmd.Process.Signal(syscall.SIGKILL)
	<-w1.done
	if n := len(readResults(t, out)); n != 119 {
		t.Fatalf("%d results after the kill, want 119", n)
	}

	w2 := startWorker(t, cfg, echo)
	defer w2.stop()
	cmd = reinsCmd(t, home, "batch", "--config", cfg, "-m", "mock/echo", "--parallel", "8", "-o", out, "--resume", tasks)
	errb.Reset()
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("resume: %v\n%s", err, errb.Bytes())
	}
	checkAll(t, readResults(t, out), 200)
}
