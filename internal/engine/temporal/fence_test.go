package temporal

import (
	"io"
	"os/exec"
	"testing"
	"time"
)

// The fence kills the process whose renewals stop, and leaves alone one
// that renews or that ended its renewals itself (exited).
func TestFence(t *testing.T) {
	if HeartbeatTimeout <= Lease+HeartbeatEvery {
		t.Fatalf("HeartbeatTimeout %s is not longer than Lease %s and a beat: a retry could start before the fence kills", HeartbeatTimeout, Lease)
	}
	start := func() (*exec.Cmd, chan struct{}) {
		cmd := exec.Command("sleep", "300")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		t.Cleanup(func() { cmd.Process.Kill(); <-done })
		return cmd, done
	}

	// Renewals that stop: killed.
	cmd, done := start()
	r, w := io.Pipe()
	go func() {
		for range 3 {
			w.Write([]byte{1})
			time.Sleep(10 * time.Millisecond)
		}
	}()
	if !Fence(r, cmd.Process.Pid, 200*time.Millisecond) {
		t.Error("the fence did not kill a process whose lease lapsed")
	}
	w.Close()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the fenced process is alive")
	}

	// Renewals that end (the worker exited): nothing killed.
	cmd, done = start()
	r, w = io.Pipe()
	go func() {
		for range 5 {
			w.Write([]byte{1})
		}
		w.Close()
	}()
	if Fence(r, cmd.Process.Pid, time.Minute) {
		t.Error("the fence killed a process that ended its renewals")
	}
	select {
	case <-done:
		t.Error("the process was killed")
	default:
	}
}
