package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// TestTemporalFrozenWorker is issue 49's acceptance: a child with a
// timeout runs on a real worker against a real dev server; its first
// step completes a message, its second stalls. Once the cluster holds the
// heartbeat carrying that message (read from the cluster, so the verdict
// does not depend on speed), the worker is frozen with SIGSTOP: it
// answers nothing, not even the cancel. The parent enforces the agent's
// timeout itself, waits subagents.cancelGrace, and settles the child
// aborted with the earlier complete message, the fixed stage-remote
// timeout diagnostic and the note that the log is on the worker. On the
// old engine the parent waited for an acknowledgement that never came.
func TestTemporalFrozenWorker(t *testing.T) {
	useTemporalHelper(t)
	const timeout, grace = 30 * time.Second, 3 * time.Second
	addr, stopServer := testutil.StartTemporal(t, testutil.MarkChildren(t))
	defer stopServer()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "temporal.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("subagents:\n  engine: temporal\n  cancelGrace: %s\n  temporal: {address: %q, namespace: default, taskQueue: q-frozen}\n", grace, addr)), 0o644)
	agent := fmt.Sprintf("---\nname: timed\ndescription: a child with a timeout\ntimeout: %s\n---\nYou work.\n", timeout)
	childScript := filepath.Join(dir, "child.yaml")
	os.WriteFile(childScript, []byte(`replies:
  - match: child-task
    text: the first answer
    toolCalls:
      - {id: t1, name: glob, arguments: {pattern: "*.nothing"}}
  - {fault: stall, repeat: true}
`), 0o644)
	w := startWorker(t, cfg, childScript)
	defer w.stop()
	for _, home := range []string{w.home} {
		os.MkdirAll(filepath.Join(home, "agents"), 0o755)
		os.WriteFile(filepath.Join(home, "agents", "timed.md"), []byte(agent), 0o644)
	}
	parentHome := t.TempDir()
	os.MkdirAll(filepath.Join(parentHome, "agents"), 0o755)
	os.WriteFile(filepath.Join(parentHome, "agents", "timed.md"), []byte(agent), 0o644)
	parentScript := filepath.Join(dir, "parent.yaml")
	os.WriteFile(parentScript, []byte(`replies:
  - match: delegate
    toolCalls:
      - {id: c1, name: subagent, arguments: {description: timed child, prompt: child-task go, agent: timed}}
fallback: {text: parent done}
`), 0o644)
	parent := reinsCmd(t, parentHome, "run", "--config", cfg, "--sandbox", "off", "-m", "mock/echo", "--json", "delegate")
	parent.Env = append(parent.Env, "REINS_MOCK_SCRIPT="+parentScript)
	var pout, perr bytes.Buffer
	parent.Stdout, parent.Stderr = &pout, &perr
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	pdone := make(chan error, 1)
	go func() { pdone <- parent.Wait() }()
	defer func() { parent.Process.Kill() }()

	// Freeze the worker once the cluster shows the heartbeat with the
	// first complete message.
	deadline := time.Now().Add(2 * time.Minute)
	for !clusterHolds(t, addr, "the first answer") {
		select {
		case err := <-pdone:
			w.stop()
			plog, _ := os.ReadFile(filepath.Join(parentHome, "logs", "reins.log"))
			wlog, _ := os.ReadFile(filepath.Join(w.home, "logs", "reins.log"))
			t.Fatalf("the parent ended (%v) before the cluster held the message\nstdout %s\nstderr %s\nparent log %s\nworker: %s\nworker log %s\nlast describe %s", err, pout.Bytes(), perr.Bytes(), plog, w.errb.Bytes(), wlog, lastDescribe)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cluster never held the heartbeat with the first message\nworker: %s\nparent: %s", w.errb.Bytes(), perr.Bytes())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := w.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	defer func() {
		w.cmd.Process.Signal(syscall.SIGKILL)
		<-w.done
	}()
	var settled time.Time
	select {
	case err := <-pdone:
		settled = time.Now()
		if err != nil {
			t.Fatalf("parent: %v\n%s", err, perr.Bytes())
		}
	case <-time.After(timeout + grace + 2*time.Minute):
		t.Fatalf("the parent still waits on the frozen worker %s after it froze\n%s", time.Since(frozen), perr.Bytes())
	}
	var res runResult
	if err := json.Unmarshal(pout.Bytes(), &res); err != nil {
		t.Fatalf("parent result %s (%v)", pout.Bytes(), err)
	}
	ld, err := session.Load(filepath.Join(parentHome, "sessions", res.SessionID, session.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var end *session.SubagentEnd
	var toolResult string
	for _, e := range ld.Events {
		switch e.Type {
		case session.TypeSubagentEnd:
			end = &session.SubagentEnd{}
			e.Decode(end)
		case session.TypeToolResult:
			toolResult = string(e.Data)
		}
	}
	want := "Subagent failure (provider: inprocess; stage: remote; category: timeout; stop reason: aborted)"
	if end == nil || end.StopReason != "aborted" || end.Diagnostic != want || end.LastAssistantMessage == nil ||
		!strings.Contains(llm.BlocksText(end.LastAssistantMessage.Content), "the first answer") {
		t.Fatalf("subagent/end %+v, want aborted with the first answer and %q\ntool result %s", end, want, toolResult)
	}
	if !strings.Contains(toolResult, "the child's full log is on its worker") {
		t.Errorf("tool result %s: no note that the log is on the worker", toolResult)
	}
	// The parent settled the child within its timeout and the grace of
	// its start (a generous bound: the start itself waits on the cluster).
	if d := time.Duration(end.DurationMs) * time.Millisecond; d > timeout+grace+time.Minute {
		t.Errorf("the child settled after %s, want within timeout %s + grace %s", d, timeout, grace)
	}
	t.Logf("the child settled after %dms (timeout %s, grace %s); the parent returned %s after the freeze", end.DurationMs, timeout, grace, settled.Sub(frozen).Round(time.Millisecond))
}

var lastDescribe []byte

// clusterHolds reports whether a pending activity on the cluster at addr
// has heartbeat details containing want, read with the temporal CLI.
func clusterHolds(t *testing.T, addr, want string) bool {
	t.Helper()
	bin := testutil.TemporalPath()
	out, err := exec.Command(bin, "workflow", "list", "--address", addr, "--query", "ExecutionStatus='Running'", "-o", "json").Output()
	if err != nil {
		return false
	}
	var list []struct {
		Execution struct {
			WorkflowID string `json:"workflowId"`
		} `json:"execution"`
	}
	if json.Unmarshal(out, &list) != nil {
		// one object per line
		for _, line := range bytes.Split(out, []byte("\n")) {
			var one struct {
				Execution struct {
					WorkflowID string `json:"workflowId"`
				} `json:"execution"`
			}
			if json.Unmarshal(line, &one) == nil {
				list = append(list, one)
			}
		}
	}
	for _, wf := range list {
		d, err := exec.Command(bin, "workflow", "describe", "--address", addr, "-w", wf.Execution.WorkflowID, "-o", "json").Output()
		if err != nil {
			continue
		}
		lastDescribe = d
		if containsDecoded(d, want) {
			return true
		}
	}
	return false
}

// containsDecoded reports whether b (JSON) holds want, as text or inside
// a base64 string (a payload's data).
func containsDecoded(b []byte, want string) bool {
	if bytes.Contains(b, []byte(want)) {
		return true
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case string:
			dec, err := base64.StdEncoding.DecodeString(x)
			return err == nil && bytes.Contains(dec, []byte(want))
		case []any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		case map[string]any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}
