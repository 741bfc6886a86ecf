package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// SkipChurnEnv names the variable a user sets to 1 to skip, explicitly,
// TestTemporalChurn: several minutes of a busy machine.
const SkipChurnEnv = "REINS_TEST_SKIP_CHURN"

// ChurnTasksEnv overrides the churn's 1,000 tasks (at least 10).
const ChurnTasksEnv = "REINS_TEST_CHURN_TASKS"

// TestTemporalChurn is issue 49's churn: a 1,000-task batch across three
// real workers on a dev server; part way (once a fifth of the results are written)
// one worker is killed with SIGKILL and another frozen with SIGSTOP for
// 60 s, then resumed. Temporal retries the lost and frozen workers' runs on
// the third; the frozen one's late answers are refused by the cluster.
// Every result is there exactly once, in input order, completed.
func TestTemporalChurn(t *testing.T) {
	if os.Getenv(SkipChurnEnv) == "1" {
		t.Skipf("skipped: %s=1", SkipChurnEnv)
	}
	cfg, stopServer := temporalSetup(t)
	defer stopServer()
	dir, home := t.TempDir(), t.TempDir()
	n := 1000
	if v, err := strconv.Atoi(os.Getenv(ChurnTasksEnv)); err == nil && v >= 10 {
		n = v // a smaller churn, to try the test itself
	}
	tasks := writeTasks(t, dir, n)
	echo := filepath.Join(dir, "echo.yaml")
	os.WriteFile(echo, []byte("fallback: {echo: true, text: 'mock: '}\n"), 0o644)
	out := filepath.Join(dir, "results.jsonl")
	var ws []*workerProc
	for range 3 {
		w := startWorker(t, cfg, echo)
		defer w.stop()
		ws = append(ws, w)
	}
	killed, frozen := ws[0], ws[1]
	cmd := reinsCmd(t, home, "batch", "--config", cfg, "-m", "mock/echo", "--parallel", "20", "-o", out, tasks)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() { cmd.Process.Kill() }()
	for deadline := time.Now().Add(10 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(out)
		if bytes.Count(b, []byte("\n")) >= n/5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("200 results not written in 10 minutes")
		}
	}
	killed.cmd.Process.Signal(syscall.SIGKILL)
	<-killed.done
	frozen.cmd.Process.Signal(syscall.SIGSTOP)
	thawed := make(chan struct{})
	go func() {
		defer close(thawed)
		time.Sleep(60 * time.Second)
		frozen.cmd.Process.Signal(syscall.SIGCONT)
	}()
	defer func() { <-thawed }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("batch: %v\n%s", err, errb.Bytes())
		}
	case <-time.After(30 * time.Minute):
		t.Fatalf("the batch did not finish in 30 minutes\n%s", errb.Bytes())
	}
	elapsed := time.Since(start)
	checkAll(t, readResults(t, out), n)
	t.Logf("%d tasks in %s (%.1f tasks/s) across 3 workers, one killed and one frozen 60 s", n, elapsed.Round(time.Second), float64(n)/elapsed.Seconds())
}
