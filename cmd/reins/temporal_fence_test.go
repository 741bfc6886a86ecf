package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTemporalFence is issue 49's fence: a task's child stalls on one of
// two real workers, which is then frozen with SIGSTOP. Its fence (a
// process of its own) sees the lease lapse and kills it; Temporal retries
// the run on the other worker only after its heartbeat timeout, which is
// longer than the lease: the first copy is dead before the retry starts.
// No task's child runs twice at the same time.
func TestTemporalFence(t *testing.T) {
	cfg, stopServer := temporalSetup(t)
	defer stopServer()
	dir, home := t.TempDir(), t.TempDir()
	tasks := writeTasks(t, dir, 1, 1)
	stall := filepath.Join(dir, "stall.yaml")
	os.WriteFile(stall, []byte("replies:\n  - {match: stall, fault: stall, repeat: true}\n"), 0o644)
	w1 := startWorker(t, cfg, stall)
	defer w1.stop()
	w2 := startWorker(t, cfg, stall)
	defer w2.stop()
	cmd := reinsCmd(t, home, "batch", "--config", cfg, "-m", "mock/echo", "-o", filepath.Join(dir, "out.jsonl"), tasks)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	bdone := make(chan struct{})
	go func() { cmd.Wait(); close(bdone) }()
	defer func() { cmd.Process.Kill(); <-bdone }()

	// The child runs on one worker (the stand-in's session and its own).
	var victim, other *workerProc
	for deadline := time.Now().Add(2 * time.Minute); victim == nil; time.Sleep(20 * time.Millisecond) {
		switch {
		case w1.sessions() >= 2:
			victim, other = w1, w2
		case w2.sessions() >= 2:
			victim, other = w2, w1
		case time.Now().After(deadline):
			t.Fatalf("no worker ran the child in 2 minutes\n%s", errb.Bytes())
		}
	}
	if err := victim.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Watch for the retry on the other worker; when it starts, the first
	// copy must be dead.
	var killedFirst bool
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
		dead := false
		select {
		case <-victim.done:
			dead = true
		default:
		}
		if other.sessions() >= 2 {
			if !dead {
				t.Fatal("the retry started while the frozen worker's child was alive")
			}
			killedFirst = true
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no retry in 3 minutes (the frozen worker dead: %v)", dead)
		}
	}
	if !killedFirst || !strings.Contains(victim.errb.String(), "reins worker fence: the worker renewed no lease") {
		t.Errorf("the frozen worker was not killed by its fence; its stderr:\n%s", victim.errb.String())
	}
}
