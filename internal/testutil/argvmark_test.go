package testutil

import (
	"os/exec"
	"testing"
	"time"
)

func TestSleepMarked(t *testing.T) {
	marker := SleepMarker(30)
	if other := SleepMarker(30); other == marker {
		t.Fatalf("two calls gave the same marker %q", marker)
	}
	cmd := exec.Command("sleep", marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	var found []int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if found = SleepMarked(marker); len(found) > 0 {
			break
		}
	}
	if len(found) != 1 || found[0] != cmd.Process.Pid {
		t.Fatalf("SleepMarked(%q) = %v, want [%d]", marker, found, cmd.Process.Pid)
	}
	if left := SleepLeftBehind(marker, 100*time.Millisecond); len(left) != 1 {
		t.Fatalf("SleepLeftBehind = %v, want the live sleep", left)
	}
	<-done // SleepLeftBehind killed it
	if left := SleepLeftBehind(marker, time.Second); len(left) != 0 {
		t.Fatalf("SleepLeftBehind = %v after the kill", left)
	}
}
