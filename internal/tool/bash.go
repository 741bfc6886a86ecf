package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

const (
	bashDefaultTimeout = 120 * time.Second
	bashMaxTimeout     = 600 * time.Second
	// bashKeep bounds the output held in memory; the registry's cap cuts
	// the result further. A chatty command cannot exhaust memory.
	bashKeep = 1 << 20
)

// Teardown timings (SPEC §8). Variables so tests could shorten them; the
// ladder ends early as soon as the group is gone.
var (
	// bashTermGrace is how long the group gets between SIGTERM and SIGKILL.
	bashTermGrace = 2 * time.Second
	// bashReapWait bounds the wait for the group to vanish after SIGKILL.
	bashReapWait = 5 * time.Second
	// bashDrainWait bounds the wait for the output pipe to close once the
	// group is gone: a process that left the group (setsid) may hold it.
	bashDrainWait = 500 * time.Millisecond
	// groupPoll is how often the group is checked during teardown.
	groupPoll = 10 * time.Millisecond
)

type bashTool struct{}

func (bashTool) Spec() llm.ToolSpec {
	return spec("bash",
		"Run a shell command with `bash -c` in the workspace directory. stdout and stderr are combined; the exit code is reported. timeout is in seconds (default 120, max 600). When the command ends, times out or is canceled, every process it started is killed, background ones included.",
		`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The shell command to run."},
    "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": 600, "description": "Timeout in seconds (default 120, max 600)."}
  },
  "required": ["command"],
  "additionalProperties": false
}`)
}

func (bashTool) Needs() Permission { return WorkspaceWrite }

type bashArgs struct {
	Command *string  `json:"command"`
	Timeout *float64 `json:"timeout"`
}

func (bashTool) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a bashArgs
	if err := decodeArgs(raw, &a); err != nil {
		return Errorf("%v", err)
	}
	if err := required("command", a.Command); err != nil {
		return Errorf("%v", err)
	}
	if strings.TrimSpace(*a.Command) == "" {
		return Errorf("command is empty")
	}
	timeout := bashDefaultTimeout
	if a.Timeout != nil {
		if *a.Timeout <= 0 {
			return Errorf("timeout must be more than 0 seconds")
		}
		timeout = min(time.Duration(*a.Timeout*float64(time.Second)), bashMaxTimeout)
	}
	dir, err := env.Resolve("")
	if err != nil {
		return Errorf("%v", err)
	}
	if ctx.Err() != nil {
		return Errorf("command canceled before it started")
	}
	return runBash(ctx, dir, *a.Command, timeout)
}

// runBash runs command in its own process group and returns only when the
// leader is reaped and the group is gone.
//
// The output goes through a pipe of our own rather than exec's copier, so
// cmd.Wait returns when the leader exits even if a background grandchild
// still holds the pipe; the group is then torn down, which closes it.
func runBash(ctx context.Context, dir, command string, timeout time.Duration) Result {
	pr, pw, err := os.Pipe()
	if err != nil {
		return Errorf("cannot start bash: %v", err)
	}
	cmd := exec.Command("bash", "-c", command)
	cmd.Dir = dir
	cmd.Stdout = pw
	cmd.Stderr = pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return Errorf("cannot start bash: %v", osErr(err))
	}
	pw.Close() // the children hold their copies
	pgid := cmd.Process.Pid

	out := &headBuffer{limit: bashKeep}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		_, _ = io.Copy(out, pr)
	}()
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var waitErr error
	exited, timedOut, canceled := false, false, false
	select {
	case waitErr = <-waitDone:
		exited = true
	case <-timer.C:
		timedOut = true
	case <-ctx.Done():
		canceled = true
	}
	if !exited {
		waitErr = killGroup(pgid, waitDone)
	} else {
		// Background processes the command left behind go too.
		killGroup(pgid, nil)
	}

	select {
	case <-readDone:
	case <-time.After(bashDrainWait):
	}
	pr.Close() // unblocks the copier if something outside the group holds the pipe
	<-readDone

	text := out.String()
	switch {
	case timedOut:
		return Result{Content: joinOutput(text, "[command timed out after "+formatSeconds(timeout)+" s and was killed]"), IsError: true}
	case canceled:
		return Result{Content: joinOutput(text, "[command canceled and killed]"), IsError: true}
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return Result{Content: joinOutput(text, "[waiting for bash failed]"), IsError: true}
	}
	code := cmd.ProcessState.ExitCode()
	if code < 0 {
		return Result{Content: joinOutput(text, "[command was killed: "+cmd.ProcessState.String()+"]"), IsError: true}
	}
	return Result{Content: joinOutput(text, fmt.Sprintf("[exit code %d]", code)), IsError: code != 0}
}

// killGroup tears the process group down: SIGTERM, a grace period, SIGKILL,
// then a bounded wait for it to vanish. If waitDone is not nil the leader
// is still unreaped and its Wait result is returned once it arrives (the
// leader is our child, so it is always reaped: SIGKILL cannot be ignored).
func killGroup(pgid int, waitDone <-chan error) error {
	var waitErr error
	leaderDone := waitDone == nil
	// settled reports whether the leader is reaped and the group is gone.
	settled := func() bool {
		if !leaderDone {
			select {
			case waitErr = <-waitDone:
				leaderDone = true
			default:
			}
		}
		return leaderDone && groupGone(pgid)
	}
	until := func(d time.Duration) bool {
		deadline := time.Now().Add(d)
		for {
			if settled() {
				return true
			}
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(groupPoll)
		}
	}

	if settled() {
		return waitErr
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	if until(bashTermGrace) {
		return waitErr
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	if !leaderDone {
		waitErr = <-waitDone
		leaderDone = true
	}
	until(bashReapWait)
	return waitErr
}

// groupGone reports whether no live process is left in the group. Zombies
// do not count: they hold nothing, and once the leader is gone they are
// init's to reap.
func groupGone(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return true
	}
	if err != nil {
		return false
	}
	live, ok := liveInGroup(pgid)
	return ok && !live
}

// liveInGroup scans /proc for a non-zombie process in group pgid; ok is
// false where /proc cannot be read.
func liveInGroup(pgid int) (live, ok bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false, false
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		state, pg, ok := parseStat(string(data))
		if ok && pg == pgid && state != "Z" && state != "X" {
			return true, true
		}
	}
	return false, true
}

// parseStat extracts the state and process group from /proc/PID/stat. The
// command name is in parentheses and may hold spaces, so fields are counted
// from the last ")".
func parseStat(s string) (state string, pgrp int, ok bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(s[i+1:])
	// state ppid pgrp ...
	if len(f) < 3 {
		return "", 0, false
	}
	pg, err := strconv.Atoi(f[2])
	if err != nil {
		return "", 0, false
	}
	return f[0], pg, true
}

func formatSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// joinOutput puts the status line after the command's output.
func joinOutput(out, status string) string {
	if out == "" {
		return status
	}
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out + status
}

// headBuffer keeps the first limit bytes written to it and counts the rest.
type headBuffer struct {
	limit   int
	buf     []byte
	dropped int64
}

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := h.limit - len(h.buf); room > 0 {
		n := min(room, len(p))
		h.buf = append(h.buf, p[:n]...)
		h.dropped += int64(len(p) - n)
	} else {
		h.dropped += int64(len(p))
	}
	return len(p), nil
}

func (h *headBuffer) String() string {
	if h.dropped == 0 {
		return string(h.buf)
	}
	return fmt.Sprintf("%s\n[output truncated: %d more bytes not kept]", h.buf, h.dropped)
}
