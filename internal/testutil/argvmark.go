package testutil

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// A process reins starts runs in a container with its own PID namespace
// and a scrubbed environment: a pid it prints ($$, $!) is not a host pid,
// and MarkEnv may not reach it. A test that must see whether such a
// process outlived something finds it on the host by its arguments
// instead: it runs `sleep MARKER`, MARKER from SleepMarker, and looks the
// marker up with SleepMarked or SleepLeftBehind.

var sleepSeq atomic.Int64

// SleepMarker returns a sleep duration of about seconds that no other call
// (in this or another test binary) returns, e.g. "300.0123400007", for a
// command to run as `sleep MARKER`.
func SleepMarker(seconds int) string {
	return fmt.Sprintf("%d.%07d%03d", seconds, os.Getpid()%10000000, sleepSeq.Add(1)%1000)
}

// SleepMarked returns the host pids of the live processes whose command
// line is `sleep MARKER` (zombies have exited and do not count).
func SleepMarked(marker string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte("sleep\x00" + marker + "\x00")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.HasSuffix(cmd, want) {
			continue
		}
		if live(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// SleepLeftBehind waits up to wait for the `sleep MARKER` processes to
// go and returns those still alive, after killing them (SIGKILL) so a
// failing test leaves nothing behind.
func SleepLeftBehind(marker string, wait time.Duration) []int {
	deadline := time.Now().Add(wait)
	for {
		left := SleepMarked(marker)
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// live reports whether /proc/pid/stat shows a running (not zombie or
// dead) process.
func live(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] != 'Z' && b[i+2] != 'X'
}
