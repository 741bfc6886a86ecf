package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
)

// finish waits for a run that ends by itself and returns its exit status
// and --json object.
func (r *sigRun) finish(t *testing.T) (int, runResult) {
	t.Helper()
	var err error
	select {
	case err = <-r.done:
		r.done <- err
	case <-time.After(120 * time.Second):
		t.Fatalf("reins did not exit\nstderr %s", r.errb.Bytes())
	}
	code := 0
	if err != nil {
		ee, ok := err.(interface{ ExitCode() int })
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	var out runResult
	if e := json.Unmarshal(r.out.Bytes(), &out); e != nil {
		t.Fatalf("stdout is not the --json object: %v\n%s\nstderr %s", e, r.out.Bytes(), r.errb.Bytes())
	}
	return code, out
}

// checkJobsAccounted checks that every subagent/start in the parent's log
// has its subagent/end and every background job its job/notice, each
// enclosed by a turn.
func checkJobsAccounted(t *testing.T, ld *session.Loaded) (notices []session.JobNotice) {
	t.Helper()
	starts, ends := map[string]bool{}, map[string]bool{}
	bg := 0
	open := false
	for _, e := range ld.Events {
		switch e.Type {
		case session.TypeTurnStart:
			open = true
		case session.TypeTurnEnd:
			open = false
		default:
			if !open {
				t.Errorf("event %d %s lies outside a turn", e.Seq, e.Type)
			}
		}
		switch e.Type {
		case session.TypeSubagentStart:
			var s session.SubagentStart
			e.Decode(&s)
			starts[s.RunID] = true
			if s.Background {
				bg++
			}
		case session.TypeSubagentEnd:
			var s session.SubagentEnd
			e.Decode(&s)
			ends[s.RunID] = true
		case session.TypeJobNotice:
			var n session.JobNotice
			e.Decode(&n)
			notices = append(notices, n)
		}
	}
	for id := range starts {
		if !ends[id] {
			t.Errorf("subagent %s started but has no subagent/end", id)
		}
	}
	if len(notices) != bg {
		t.Errorf("%d background jobs, %d job/notice events", bg, len(notices))
	}
	return notices
}

// TestRunExitReflectsWorstTurn: the first turn starts a background job and
// then fails (401); the notice-only turn that follows completes. The run's
// exit status and --json stopReason are the failed turn's (issue 14 #13).
func TestRunExitReflectsWorstTurn(t *testing.T) {
	script := `
replies:
  - match: GO13
    toolCalls:
      - {id: c1, name: subagent, arguments: {description: worker, prompt: CHILD-WORK, run_in_background: true}}
  - {match: CHILD-WORK, text: child done, barrier: 2}
  - {match: Started background job, status: 401, body: '{"error":{"message":"bad key"}}', barrier: 2}
  - {match: "finished [status: completed]", text: noted}
`
	r := startSigRun(t, script, nil, "GO13")
	code, out := r.finish(t)
	if code != exitFailed || out.StopReason != outcome.StopError {
		t.Errorf("exit %d stopReason %q, want 1 and error (the first turn failed)\nstderr %s", code, out.StopReason, r.errb.Bytes())
	}
	if out.Error == nil {
		t.Errorf("--json has no error object: %s", r.out.Bytes())
	}
	checkJobsAccounted(t, r.rootLog(t))
}

// TestRunWakeupLimitKillsJobsVisibly: a parent that starts a new job on
// every notice, beside one job that never ends, reaches the wake-up limit.
// The jobs still running are killed, each with its subagent/end and a
// killed job/notice inside a turn, and the run does not claim completed.
func TestRunWakeupLimitKillsJobsVisibly(t *testing.T) {
	script := `
replies:
  - match: GO13
    toolCalls:
      - {id: c1, name: subagent, arguments: {description: stuck, prompt: CHILD-STALL, run_in_background: true}}
      - {id: c2, name: subagent, arguments: {description: quick, prompt: CHILD-QUICK, run_in_background: true}}
  - {match: CHILD-STALL, fault: stall, repeat: true}
  - {match: CHILD-QUICK, text: quick done, repeat: true}
  - match: "(subagent: quick) finished"
    repeat: true
    toolCalls:
      - {id: c3, name: subagent, arguments: {description: quick, prompt: CHILD-QUICK, run_in_background: true}}
  - {match: Started background job, text: waiting, repeat: true}
`
	r := startSigRun(t, script, nil, "GO13")
	code, out := r.finish(t)
	if code == 0 || out.StopReason == outcome.StopCompleted {
		t.Errorf("exit %d stopReason %q: a run whose jobs were cut off claims success", code, out.StopReason)
	}
	ld := r.rootLog(t)
	notices := checkJobsAccounted(t, ld)
	killed := 0
	for _, n := range notices {
		if n.Status == subagent.JobKilled {
			killed++
		}
	}
	if killed == 0 {
		t.Errorf("no killed job/notice: %+v", notices)
	}
}

// TestInterruptWhileWaitingOnJob: SIGINT while the parent is idle waiting
// for a background job exits 130 with stopReason aborted, and the killed
// job is recorded (issue 14 #14).
func TestInterruptWhileWaitingOnJob(t *testing.T) {
	script := `
replies:
  - match: GO14
    toolCalls:
      - {id: c1, name: subagent, arguments: {description: stuck, prompt: CHILD-STALL, run_in_background: true}}
  - {match: CHILD-STALL, fault: stall, repeat: true}
  - {match: Started background job, text: waiting}
`
	r := startSigRun(t, script, nil, "GO14")
	r.waitUntil(t, "the idle parent", func() bool {
		return r.logHas(`"type":"turn/end"`) && r.srv.InFlight() == 1
	})
	code := r.interrupt(t, syscall.SIGINT)
	var out runResult
	if err := json.Unmarshal(r.out.Bytes(), &out); err != nil {
		t.Fatalf("stdout: %v\n%s", err, r.out.Bytes())
	}
	if code != exitInterrupt || out.StopReason != outcome.StopAborted {
		t.Errorf("exit %d stopReason %q, want 130 and aborted", code, out.StopReason)
	}
	ld := r.rootLog(t)
	if te := lastTurnEnd(t, ld); te.Reason != session.ReasonAborted || te.By != session.AbortedByUser {
		t.Errorf("last turn ended %+v, want aborted by user", te)
	}
	notices := checkJobsAccounted(t, ld)
	if len(notices) != 1 || notices[0].Status != subagent.JobKilled {
		t.Errorf("job notices %+v, want one killed", notices)
	}
}

// TestRuntimeFailureExits1: a session directory that cannot be created is
// a runtime failure (1); a negative --max-tokens is a usage error (2)
// (issue 14 #16).
func TestRuntimeFailureExits1(t *testing.T) {
	home := t.TempDir()
	// sessions is a file: no session directory can be made under it.
	if err := os.WriteFile(filepath.Join(home, "sessions"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr := exitCode(t, reinsCmd(t, home, "run", "-m", "mock/echo", "hi"))
	if code != exitFailed || !strings.HasPrefix(stderr, "reins: ") {
		t.Errorf("unwritable sessions dir: exit %d, want 1; stderr %q", code, stderr)
	}
	for _, v := range []string{"-5", "-1"} {
		code, stderr = exitCode(t, reinsCmd(t, t.TempDir(), "run", "-m", "mock/echo", "--max-tokens", v, "hi"))
		if code != exitUsage || !strings.Contains(stderr, "--max-tokens") {
			t.Errorf("--max-tokens %s: exit %d, want 2; stderr %q", v, code, stderr)
		}
	}
}

// TestBackgroundAdmissionFollowsCallOrder: twelve background calls in one
// message with maxBackgroundJobs 10: calls 1..10 are jobs job-1..job-10 in
// order, calls 11 and 12 are refused (issue 14 #15).
func TestBackgroundAdmissionFollowsCallOrder(t *testing.T) {
	var calls strings.Builder
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&calls, "      - {id: call_%d, name: subagent, arguments: {description: w%d, prompt: CHILD-%d, run_in_background: true}}\n", i, i, i)
	}
	script := "replies:\n  - match: GO15\n    toolCalls:\n" + calls.String() + `  - {match: CHILD-, text: child done, barrier: 10, repeat: true}
  - {match: Started background job, text: waiting}
  - {text: noted, repeat: true}
`
	r := startSigRun(t, script, nil, "GO15")
	code, out := r.finish(t)
	if code != 0 {
		t.Errorf("exit %d stopReason %q\nstderr %s", code, out.StopReason, r.errb.Bytes())
	}
	ld := r.rootLog(t)
	results := map[string]session.ToolResult{}
	for _, e := range ld.Events {
		if e.Type == session.TypeToolResult {
			var tr session.ToolResult
			e.Decode(&tr)
			results[tr.CallID] = tr
		}
	}
	for i := 1; i <= 12; i++ {
		tr := results[fmt.Sprintf("call_%d", i)]
		if i <= 10 {
			if want := fmt.Sprintf("Started background job job-%d ", i); tr.IsError || !strings.HasPrefix(tr.Content, want) {
				t.Errorf("call_%d: %q, want %q...", i, tr.Content, want)
			}
		} else if !tr.IsError || !strings.Contains(tr.Content, "maxBackgroundJobs 10") {
			t.Errorf("call_%d: %q, want refused", i, tr.Content)
		}
	}
	checkJobsAccounted(t, ld)
}
