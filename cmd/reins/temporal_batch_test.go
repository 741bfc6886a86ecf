package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTemporalBatchResumeAttaches (issue 28, item 2): the batch client is
// killed while tasks run on a live worker; --resume re-attaches to those
// workflows (and takes the results of any that completed meanwhile)
// instead of submitting them again: all results, in order, and each task
// ran once on the worker. The old client submitted the killed batch's
// running tasks a second time, so they ran twice.
func TestTemporalBatchResumeAttaches(t *testing.T) {
	cfg, stopServer := temporalSetup(t)
	defer stopServer()
	dir, home := t.TempDir(), t.TempDir()
	const n = 12
	// Tasks 5 to 12 take 6 s each on the worker, the first four none.
	tasks := writeTasks(t, dir, n, 5, 6, 7, 8, 9, 10, 11, 12)
	slow := filepath.Join(dir, "slow.yaml")
	os.WriteFile(slow, []byte("replies:\n  - {match: stall, echo: true, text: 'mock: ', delay: 6s, repeat: true}\nfallback: {echo: true, text: 'mock: '}\n"), 0o644)
	out := filepath.Join(dir, "results.jsonl")
	w := startWorker(t, cfg, slow)
	defer w.stop()

	cmd := reinsCmd(t, home, "batch", "--config", cfg, "-m", "mock/echo", "--parallel", "4", "-o", out, tasks)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	defer func() { cmd.Process.Kill(); <-done }()
	// Killed once the first four are in and the worker has begun one of
	// the slow tasks (its request is in the child's log before the mock's
	// 6 s reply): an event, not a guess at how soon the worker picks the
	// next tasks up — at load 15 it had begun none when the fourth result
	// came in.
	deadline := time.Now().Add(180 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		if bytes.Count(b, []byte("\n")) >= 4 && beganAny(w.home, 5, n) {
			break
		}
		select {
		case <-done:
			t.Fatalf("batch ended early: %v\n%s", cmd.ProcessState, errb.Bytes())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no 4 results and no slow task begun after 180 s\n%s", errb.Bytes())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
	kept := len(readResults(t, out))
	// The runs the kill left on the cluster: tasks the worker had begun
	// that have no result.
	inFlight := 0
	for i := kept + 1; i <= n; i++ {
		for _, c := range conversationsIn(t, w.home) {
			if ranTask(c, i) {
				inFlight++
				break
			}
		}
	}
	if inFlight == 0 {
		t.Fatalf("%d results kept and no task running on the worker at the kill: nothing to re-attach to", kept)
	}

	cmd = reinsCmd(t, home, "batch", "--config", cfg, "-m", "mock/echo", "--parallel", "4", "-o", out, "--resume", tasks)
	errb.Reset()
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("resume: %v\n%s", err, errb.Bytes())
	}
	checkAll(t, readResults(t, out), n)
	// Each task ran once on the worker: one child session per prompt.
	// Runs still going when the kill came would otherwise run twice.
	convs := conversationsIn(t, w.home)
	for i := 1; i <= n; i++ {
		runs := 0
		for _, c := range convs {
			if ranTask(c, i) {
				runs++
			}
		}
		if runs != 1 {
			t.Errorf("task %d ran %d times on the worker, want once", i, runs)
		}
	}
	t.Logf("%d results kept after the kill, %d tasks running on the worker then", kept, inFlight)
}

// beganAny reports whether a worker session holds one of tasks from..to.
// A log it cannot load yet (being written) counts as not begun.
func beganAny(home string, from, to int) bool {
	convs, _ := readConversations(home)
	for _, c := range convs {
		for i := from; i <= to; i++ {
			if ranTask(c, i) {
				return true
			}
		}
	}
	return false
}

// ranTask reports whether a worker session's conversation is task i's
// (writeTasks's prompt).
func ranTask(conv string, i int) bool {
	return strings.HasPrefix(conv, fmt.Sprintf("user: task %d\n", i)) || strings.HasPrefix(conv, fmt.Sprintf("user: task %d stall\n", i))
}
