package proc

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reinsdev/reins/internal/testutil"
)

// TestMain fails the package if a test leaves a process behind: every
// process the tests start carries the mark.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(testutil.ExitUnlessClean(testutil.Mark("proc"))))
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		in    string
		state string
		pgrp  int
		ok    bool
	}{
		{"123 (sleep) S 1 456 456 0 -1", "S", 456, true},
		{"123 (a b) c) Z 1 77 77 0", "Z", 77, true},
		{"garbage", "", 0, false},
		{"1 (x) S", "", 0, false},
	}
	for _, tt := range tests {
		state, pg, ok := parseStat(tt.in)
		if state != tt.state || pg != tt.pgrp || ok != tt.ok {
			t.Errorf("parseStat(%q) = %q, %d, %v; want %q, %d, %v", tt.in, state, pg, ok, tt.state, tt.pgrp, tt.ok)
		}
	}
}

// fast is a ladder short enough for tests but long enough for a shell to
// react; nothing asserts on durations.
var fast = Ladder{Grace: 300 * time.Millisecond, Term: 300 * time.Millisecond, Reap: 5 * time.Second}

func assertGone(t *testing.T, pgid int) {
	t.Helper()
	if live, ok := LiveInGroup(pgid); !ok || live {
		syscall.Kill(-pgid, syscall.SIGKILL)
		t.Fatalf("group %d still has live processes", pgid)
	}
}

func TestLadder(t *testing.T) {
	tests := []struct {
		name       string
		script     string
		wantCode   int
		wantSignal string
	}{
		// Exits by itself when stdin closes: the grace step suffices.
		// (read is a builtin: nothing is started after "ready".)
		{"exits on stdin EOF", "echo ready; while read -r _; do :; done; exit 3", 3, ""},
		// Ignores stdin EOF but honours SIGTERM.
		{"needs SIGTERM", "echo ready; exec sleep 300", -1, "SIGTERM"},
		// Ignores SIGTERM: only SIGKILL ends it.
		{"needs SIGKILL", "trap '' TERM; echo ready; while :; do sleep 0.05; done", -1, "SIGKILL"},
		// A grandchild in the group outlives the leader's exit.
		{"grandchild", "sleep 300 & echo ready; while read -r _; do :; done; exit 0", 0, ""},
	}
	// Each script says "ready" once it is set up (its trap in place, its
	// grandchild started), and the ladder starts only then: on a busy
	// machine bash may not have reached its trap within any fixed wait
	// (a 300 ms grace once ran out before it did). The grace is long for
	// the same reason; the cases that wait it out cost 5 s each.
	//
	// The case that names SIGTERM waits a minute after it: sleep dies of it
	// at once, but on a loaded machine "at once" has no fixed bound, and a
	// second's wait would turn a slow death into a SIGKILL verdict.
	for _, tc := range tests {
		ladder := Ladder{Grace: 5 * time.Second, Term: time.Second, Reap: 5 * time.Second}
		if tc.wantSignal == "SIGTERM" {
			ladder.Term = time.Minute
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, pipes, err := StartPiped(exec.Command("bash", "-c", tc.script))
			if err != nil {
				t.Fatal(err)
			}
			defer pipes.Stdout.Close()
			defer pipes.Stderr.Close()
			ready := make(chan error, 1)
			go func() {
				line, err := bufio.NewReader(pipes.Stdout).ReadString('\n')
				if err == nil && line != "ready\n" {
					err = fmt.Errorf("said %q", line)
				}
				ready <- err
			}()
			select {
			case err := <-ready:
				if err != nil {
					t.Fatalf("the script did not get ready: %v", err)
				}
			case <-time.After(2 * time.Minute):
				t.Fatal("the script did not get ready within 2 minutes")
			}
			if err := p.Dispose(ladder); err != nil {
				t.Fatal(err)
			}
			assertGone(t, p.Pgid)
			code, sig, ok := p.ExitStatus()
			if !ok || code != tc.wantCode || sig != tc.wantSignal {
				t.Errorf("exit (%d, %q, %v), want (%d, %q)", code, sig, ok, tc.wantCode, tc.wantSignal)
			}
			// Idempotent, concurrent-safe, same answer.
			var wg sync.WaitGroup
			for i := 0; i < 3; i++ {
				wg.Add(1)
				go func() { defer wg.Done(); p.Dispose(ladder) }()
			}
			wg.Wait()
		})
	}
}

func TestStartFailureClosesPipes(t *testing.T) {
	_, _, err := StartPiped(exec.Command("/nonexistent/reins-test-binary"))
	if err == nil {
		t.Fatal("start of a missing binary succeeded")
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err %v, want not-exist", err)
	}
}

func TestExitStatusWhileRunning(t *testing.T) {
	p, pipes, err := StartPiped(exec.Command("sleep", "300"))
	if err != nil {
		t.Fatal(err)
	}
	defer pipes.Stdout.Close()
	defer pipes.Stderr.Close()
	if _, _, ok := p.ExitStatus(); ok {
		t.Error("exit status reported for a running process")
	}
	if err := p.Dispose(fast); err != nil {
		t.Fatal(err)
	}
	if _, sig, _ := p.ExitStatus(); sig != "SIGTERM" {
		t.Errorf("signal %q", sig)
	}
	if !strings.HasPrefix(SignalName(syscall.Signal(40)), "SIG") || SignalName(syscall.SIGKILL) != "SIGKILL" {
		t.Error("signal names")
	}
}
