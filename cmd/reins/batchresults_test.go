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

// TestBatchOutIsNotTheTaskFile: `reins batch -o same.jsonl same.jsonl`
// (also through a symlink) is a usage error, and the task file is kept.
func TestBatchOutIsNotTheTaskFile(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	tasks := writeTasks(t, dir, 3)
	link := filepath.Join(dir, "link.jsonl")
	os.Symlink(tasks, link)
	before, _ := os.ReadFile(tasks)
	for _, out := range []string{tasks, link} {
		for _, resume := range []bool{false, true} {
			args := []string{"batch", "-m", "mock/echo", "-o", out, tasks}
			if resume {
				args = append(args, "--resume")
			}
			code, stderr := exitCode(t, reinsCmd(t, home, args...))
			if code != exitUsage || !strings.Contains(stderr, "task file") {
				t.Errorf("%v: exit %d, want 2; stderr %s", args, code, stderr)
			}
			if after, _ := os.ReadFile(tasks); !bytes.Equal(after, before) {
				t.Fatalf("%v replaced the task file with:\n%s", args, after)
			}
		}
	}
}

// TestBatchResultsOneWriter: a second batch on a results file another batch
// is writing (a --resume started while the first still runs, or a plain
// second run) is refused with exit 2 "in use" before it writes or
// truncates anything; the first batch's results stay whole.
func TestBatchResultsOneWriter(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	tasks := writeTasks(t, dir, 10, 6)
	script := filepath.Join(dir, "stall.yaml")
	os.WriteFile(script, []byte("replies:\n  - {match: stall, fault: stall, repeat: true}\nfallback: {echo: true, text: 'mock: '}\n"), 0o644)
	out := filepath.Join(dir, "results.jsonl")
	first := reinsCmd(t, home, "batch", "-m", "mock/echo", "--parallel", "2", "-o", out, tasks)
	first.Env = append(first.Env, "REINS_MOCK_SCRIPT="+script)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { first.Wait(); close(done) }()
	defer func() { first.Process.Kill(); <-done }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		if bytes.Count(b, []byte("\n")) >= 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first batch never wrote 5 results")
		}
		time.Sleep(20 * time.Millisecond)
	}
	held, _ := os.ReadFile(out)
	for _, extra := range [][]string{{"--resume"}, nil} {
		args := append([]string{"batch", "-m", "mock/echo", "-o", out, tasks}, extra...)
		code, stderr := exitCode(t, reinsCmd(t, home, args...))
		if code != exitUsage || !strings.Contains(stderr, "in use") {
			t.Errorf("%v: exit %d, want 2 in use; stderr %s", args, code, stderr)
		}
		if now, _ := os.ReadFile(out); !bytes.Equal(now, held) {
			t.Errorf("%v changed the results file", args)
		}
	}
	first.Process.Signal(syscall.SIGINT)
	<-done
	if n := len(readResults(t, out)); n != 5 {
		t.Errorf("%d results after the interrupt, want 5", n)
	}
}
