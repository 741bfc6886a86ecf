package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// sigRun is one `reins run --json` to be interrupted.
type sigRun struct {
	srv  *mock.Server
	home string
	dir  string
	cmd  *exec.Cmd
	out  bytes.Buffer
	errb bytes.Buffer
	done chan error
	// marker replaced MARKER in the script: a `sleep MARKER` the run
	// starts is found on the host by it (testutil.SleepMarker).
	marker string
}

// startSigRun starts reins on script in a workspace holding files.
func startSigRun(t *testing.T, script string, files map[string]string, prompt string) *sigRun {
	t.Helper()
	sc, err := mock.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	url, srv, stop := mock.StartTest(sc)
	t.Cleanup(stop)
	r := &sigRun{srv: srv, home: t.TempDir(), done: make(chan error, 1)}
	r.cmd = reinsCmd(t, r.home, "run", "--json", "--base-url", url, "-m", "openai/m", prompt)
	r.dir = r.cmd.Dir
	for name, body := range files {
		p := filepath.Join(r.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Trust(t, r.home, r.dir)
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.errb
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			r.cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

// waitUntil polls cond until it holds; the run must not end first.
func (r *sigRun) waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		select {
		case err := <-r.done:
			r.done <- err
			t.Fatalf("run ended (%v) before %s\nstdout %s\nstderr %s", err, what, r.out.Bytes(), r.errb.Bytes())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// logHas reports whether the session log on disk contains s.
func (r *sigRun) logHas(s string) bool {
	m, _ := filepath.Glob(filepath.Join(r.home, "sessions", "*", session.FileName))
	for _, p := range m {
		if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// interrupt sends sig and returns the exit status.
func (r *sigRun) interrupt(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-r.done:
		r.done <- err
	case <-time.After(60 * time.Second):
		t.Fatalf("reins did not exit after %v", sig)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode() // -1 when killed by the signal itself
	}
	t.Fatal(err)
	return 0
}

// rootLog loads the parent session's log and checks it was closed cleanly:
// it loads with nothing to repair.
func (r *sigRun) rootLog(t *testing.T) *session.Loaded {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(r.home, "sessions", "*", session.FileName))
	for _, p := range m {
		ld, err := session.Load(p)
		if err != nil {
			t.Fatalf("log does not load: %v", err)
		}
		if ld.Header.ParentSession == "" {
			if ld.Repair.Repaired() {
				t.Errorf("log was not closed cleanly: load had to repair %+v", ld.Repair)
			}
			return ld
		}
	}
	t.Fatalf("no root session in %v", m)
	return nil
}

// lastTurnEnd returns the data of the log's last event, which must be a
// turn/end.
func lastTurnEnd(t *testing.T, ld *session.Loaded) session.TurnEnd {
	t.Helper()
	if len(ld.Events) == 0 {
		t.Fatal("log has no events")
	}
	last := ld.Events[len(ld.Events)-1]
	var te session.TurnEnd
	if last.Type != session.TypeTurnEnd || last.Decode(&te) != nil {
		t.Fatalf("log ends with %s %s, want turn/end", last.Type, last.Data)
	}
	return te
}

// TestSignals interrupts a run with SIGINT and SIGTERM in each place it can
// wait — the model stream, a bash tool with a background grandchild, and a
// retry sleep — and checks docs/cli.md and docs/subagents.md: exit 130 (SIGINT) or 143
// (SIGTERM), stdout's stop reason aborted, the log closed cleanly (it loads
// with nothing to repair) with its last turn ended aborted by the user, and
// no process left behind (the grandchild is gone; MarkChildren checks
// every marked process).
func TestSignals(t *testing.T) {
	places := []struct {
		name   string
		script string
		files  map[string]string
		// ready waits until the run is waiting in the place.
		ready func(t *testing.T, r *sigRun)
		// check inspects the log and workspace after the exit.
		check func(t *testing.T, r *sigRun, ld *session.Loaded)
	}{
		{
			name:   "model stream",
			script: "replies:\n  - {reasoning: thinking..., text: 'partial ', chunk: 2, fault: stall}\n",
			ready: func(t *testing.T, r *sigRun) {
				r.waitUntil(t, "the request", func() bool { return r.srv.InFlight() == 1 })
			},
		},
		{
			name: "bash tool",
			script: `
replies:
  - toolCalls:
      - {id: c1, name: bash, arguments: {command: "sleep MARKER & wait"}}
  - {text: never reached}
`,
			// The sleep runs in the bash tool's container, where $! is a
			// pid of its own PID namespace: it is found on the host by its
			// marker argument.
			ready: func(t *testing.T, r *sigRun) {
				r.waitUntil(t, "the grandchild on the host", func() bool { return len(testutil.SleepMarked(r.marker)) > 0 })
			},
			check: func(t *testing.T, r *sigRun, ld *session.Loaded) {
				// reins exits only after the bash group is gone.
				if left := testutil.SleepLeftBehind(r.marker, 0); len(left) > 0 {
					t.Errorf("bash's background sleep (host pids %v) outlived reins", left)
				}
				var res session.ToolResult
				for _, e := range ld.Events {
					if e.Type == session.TypeToolResult {
						e.Decode(&res)
					}
				}
				if !res.IsError || !strings.Contains(res.Content, "canceled") {
					t.Errorf("tool result %+v, want the cancelled command", res)
				}
			},
		},
		{
			name:   "retry sleep",
			script: "replies:\n  - {status: 500, body: '{\"error\":{\"message\":\"boom\"}}', repeat: true}\n",
			files: map[string]string{
				".reins/config.yaml": "providers:\n  openai:\n    retry: {maxRetries: 3, initialDelay: 1h, maxDelay: 1h, jitter: 0}\n",
			},
			ready: func(t *testing.T, r *sigRun) {
				r.waitUntil(t, "llm/retry in the log", func() bool { return r.logHas(`"type":"llm/retry"`) })
			},
			check: func(t *testing.T, r *sigRun, ld *session.Loaded) {
				for _, e := range ld.Events {
					if e.Type == session.TypeLLMRetryStarted {
						t.Errorf("llm/retry-started logged: the sleep was not cut short")
					}
				}
				if n := r.srv.Count(); n != 1 {
					t.Errorf("%d requests, want the one before the sleep", n)
				}
			},
		},
	}
	for _, p := range places {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(p.name+"/"+sig.String(), func(t *testing.T) {
				marker := testutil.SleepMarker(300)
				r := startSigRun(t, strings.ReplaceAll(p.script, "MARKER", marker), p.files, "go")
				r.marker = marker
				p.ready(t, r)
				code := r.interrupt(t, sig)
				if want := 128 + int(sig); code != want {
					t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, want, r.out.Bytes(), r.errb.Bytes())
				}
				var out runResult
				if err := json.Unmarshal(r.out.Bytes(), &out); err != nil {
					t.Fatalf("stdout is not the --json object: %v\n%s", err, r.out.Bytes())
				}
				if out.StopReason != outcome.StopAborted {
					t.Errorf("stopReason %q, want aborted", out.StopReason)
				}
				ld := r.rootLog(t)
				if te := lastTurnEnd(t, ld); te.Reason != session.ReasonAborted || te.By != session.AbortedByUser {
					t.Errorf("last turn ended %+v, want aborted by user", te)
				}
				if p.check != nil {
					p.check(t, r, ld)
				}
			})
		}
	}
}

// TestSignalWithStalledSubagent interrupts a parent while its in-process
// child's model stream stalls: the child's turn ends aborted by the parent,
// the parent's aborted by the user, both logs close cleanly, and reins
// exits 130.
func TestSignalWithStalledSubagent(t *testing.T) {
	script := `
replies:
  - match: PARENT-GO
    toolCalls:
      - {id: c1, name: subagent, arguments: {description: stalls, prompt: CHILD-STALL}}
  - {match: CHILD-STALL, fault: stall, repeat: true}
`
	r := startSigRun(t, script, nil, "PARENT-GO")
	r.waitUntil(t, "the child's request", func() bool { return r.srv.Count() == 2 && r.srv.InFlight() == 1 })
	if code := r.interrupt(t, syscall.SIGINT); code != exitInterrupt {
		t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, exitInterrupt, r.out.Bytes(), r.errb.Bytes())
	}

	parent := r.rootLog(t)
	// After Ctrl-C, one line says how to go on (issue 15).
	if want := "reins: interrupted; to continue this session: reins run --resume " + parent.Header.ID + " 'PROMPT'\n"; !strings.Contains(r.errb.String(), want) {
		t.Errorf("stderr %q, want the resume hint %q", r.errb.String(), want)
	}
	if te := lastTurnEnd(t, parent); te.Reason != session.ReasonAborted || te.By != session.AbortedByUser {
		t.Errorf("parent's turn ended %+v, want aborted by user", te)
	}
	var start session.SubagentStart
	var end session.SubagentEnd
	for _, e := range parent.Events {
		switch e.Type {
		case session.TypeSubagentStart:
			e.Decode(&start)
		case session.TypeSubagentEnd:
			e.Decode(&end)
		}
	}
	if start.ChildSession == "" || end.StopReason != string(outcome.StopAborted) {
		t.Fatalf("subagent start %+v end %+v, want an aborted child", start, end)
	}
	child, err := session.Load(filepath.Join(r.home, "sessions", start.ChildSession, session.FileName))
	if err != nil {
		t.Fatalf("child log does not load: %v", err)
	}
	if child.Repair.Repaired() {
		t.Errorf("child log was not closed cleanly: %+v", child.Repair)
	}
	if child.Header.ParentSession != parent.Header.ID {
		t.Errorf("child names parent %q, want %q", child.Header.ParentSession, parent.Header.ID)
	}
	if te := lastTurnEnd(t, child); te.Reason != session.ReasonAborted || te.By != session.AbortedByParent {
		t.Errorf("child's turn ended %+v, want aborted by parent", te)
	}
}
