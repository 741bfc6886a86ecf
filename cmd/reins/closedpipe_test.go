package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm/mock"
)

// waitExit waits for cmd with a generous bound (the verdict never depends
// on it: a run that does not end is the bug) and returns its exit code,
// -1 when a signal killed it.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatal("reins did not end")
		return 0
	}
}

// closedStdout is a pipe whose reader is already gone.
func closedStdout(t *testing.T) *os.File {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	t.Cleanup(func() { w.Close() })
	return w
}

// TestStreamJSONReaderGone is `reins run --stream-json | head -1`: the
// reader goes away while the model still streams. The run ends as an
// abort with its log closed by turn/end, and reins exits 1 — it does not
// die of SIGPIPE (141) with the log cut at step/start.
func TestStreamJSONReaderGone(t *testing.T) {
	sc, err := mock.Parse([]byte("replies:\n  - text: \"" + strings.Repeat("x", 600) + "\"\n    chunk: 1\n    chunkDelay: 50ms\n"))
	if err != nil {
		t.Fatal(err)
	}
	url, _, stop := mock.StartTest(sc)
	defer stop()
	home := t.TempDir()
	cmd := reinsCmd(t, home, "run", "--stream-json", "--base-url", url, "-m", "openai/m", "go")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil || !strings.Contains(line, `"turn/start"`) {
		t.Fatalf("first line %q, %v", line, err)
	}
	r.Close() // head -1 exits
	if code := waitExit(t, cmd); code != exitFailed {
		t.Fatalf("exit %d, want %d; stderr: %s", code, exitFailed, stderr.String())
	}
	logs, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "session.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("sessions: %v", logs)
	}
	b, _ := os.ReadFile(logs[0])
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"type":"turn/end"`) || !strings.Contains(last, `"reason":"aborted"`) {
		t.Errorf("log does not end with turn/end aborted: %s", last)
	}
}

// TestClosedStdoutExits1 is `reins run --json … | true` and its siblings:
// every command that writes stdout exits 1 when it cannot, not 141.
func TestClosedStdoutExits1(t *testing.T) {
	testClosedStdout(t, nil)
}

// TestFullStdoutExits1: stdout on /dev/full, a character device whose
// every write fails with ENOSPC, is no terminal: the failed write is seen
// and the command exits 1.
func TestFullStdoutExits1(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("this test needs /dev/full: %v", err)
	}
	defer full.Close()
	testClosedStdout(t, full)
}

func testClosedStdout(t *testing.T, full *os.File) {
	sc, err := mock.Parse([]byte("replies:\n  - text: fine\n    repeat: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	url, _, stop := mock.StartTest(sc)
	defer stop()
	home := t.TempDir()
	// A session to list, written with a live stdout.
	if code, stderr := exitCode(t, reinsCmd(t, home, "run", "--base-url", url, "-m", "openai/m", "hi")); code != 0 {
		t.Fatalf("setup run: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{
		{"run", "--json", "--base-url", url, "-m", "openai/m", "hi"},
		{"run", "--base-url", url, "-m", "openai/m", "hi"},
		{"log", "--all"},
		{"log", "--all", "--json"},
		{"version"},
		{"models"},
		{"agents"},
	} {
		t.Run(strings.Join(args[:min(2, len(args))], " "), func(t *testing.T) {
			cmd := reinsCmd(t, home, args...)
			cmd.Stdout = closedStdout(t)
			if full != nil {
				// A character device that is not a terminal fails writes
				// too: it must not pass for one (the answer lost, exit 0).
				cmd.Stdout = full
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, cmd); code != exitFailed {
				t.Errorf("exit %d, want %d; stderr: %s", code, exitFailed, stderr.String())
			}
		})
	}
}
