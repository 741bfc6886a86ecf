// Package proc runs child processes in their own process group and tears
// them down with the one ladder of docs/subagents.md: close stdin and wait (grace) →
// SIGTERM to the group and wait → SIGKILL to the group → reap. Every child
// reins starts — a bash command, an ACP agent, a reins SDK runtime, a pi
// process — goes through here, so no path can leave a process behind by
// forgetting a step.
package proc

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Ladder is the teardown timing. The ladder moves on as soon as the group
// is gone, so the waits are upper bounds.
type Ladder struct {
	// Grace is the wait after stdin is closed, for the child to exit by
	// itself.
	Grace time.Duration
	// Term is the wait after SIGTERM.
	Term time.Duration
	// Reap bounds the wait for the group to vanish after SIGKILL.
	Reap time.Duration
}

// Unresponsive is l for a child that stopped talking (it stalled): closing
// its stdin will not make it exit, so SIGTERM follows at once.
func (l Ladder) Unresponsive() Ladder {
	l.Grace = 0
	return l
}

// DefaultLadder is docs/subagents.md's: 2 s, 2 s, then SIGKILL.
var DefaultLadder = Ladder{Grace: DefaultGrace, Term: DefaultTerm, Reap: DefaultReap}

// The default ladder's steps, constants so that a ladder built from them
// needs no initialisation code (internal/lazy).
const (
	DefaultGrace = 2 * time.Second
	DefaultTerm  = 2 * time.Second
	DefaultReap  = 5 * time.Second
)

// pollEvery is how often the group is checked during teardown.
const pollEvery = 10 * time.Millisecond

// ErrNotQuiescent is returned by Dispose when a process of the group was
// still alive after SIGKILL and the reap wait: the one outcome Dispose
// cannot hide, reported so nobody claims quiescence that was not observed.
var ErrNotQuiescent = errors.New("proc: process group still alive after SIGKILL")

// Process is a started child, leader of its own process group.
type Process struct {
	Cmd   *exec.Cmd
	Pgid  int
	stdin io.Closer

	done    chan struct{}
	waitErr error

	disposeOnce sync.Once
	disposeErr  error
}

// Pipes are the parent's ends of a piped child's standard streams. The
// child's ends are real pipes (not copied by goroutines), so the child's
// exit is observed even while a grandchild still holds stdout open.
type Pipes struct {
	Stdin          io.WriteCloser
	Stdout, Stderr io.ReadCloser
}

// Start starts cmd as the leader of a new process group. Its standard
// streams are whatever cmd says.
func Start(cmd *exec.Cmd) (*Process, error) {
	newGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{Cmd: cmd, Pgid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// StartPiped starts cmd with fresh pipes for stdin, stdout and stderr. A
// failed start closes every pipe it made.
func StartPiped(cmd *exec.Cmd) (*Process, *Pipes, error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	p, err := Start(cmd)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	// The child holds its own copies now.
	inR.Close()
	outW.Close()
	errW.Close()
	p.stdin = inW
	return p, &Pipes{Stdin: inW, Stdout: outR, Stderr: errR}, nil
}

// Done is closed when the group leader has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the leader and returns cmd.Wait's error.
func (p *Process) Wait() error {
	<-p.done
	return p.waitErr
}

// Exited reports whether the leader has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ExitStatus returns the leader's observed exit: its code, or the name of
// the signal that ended it. Both are closed-set facts, safe for a
// diagnostic. ok is false while the leader runs.
func (p *Process) ExitStatus() (code int, signal string, ok bool) {
	if !p.Exited() || p.Cmd.ProcessState == nil {
		return 0, "", false
	}
	ws, isWS := p.Cmd.ProcessState.Sys().(syscall.WaitStatus)
	if isWS && ws.Signaled() {
		return -1, SignalName(ws.Signal()), true
	}
	return p.Cmd.ProcessState.ExitCode(), "", true
}

// SignalName is the conventional upper-case name of a signal (SIGTERM).
func SignalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGBUS:
		return "SIGBUS"
	case syscall.SIGFPE:
		return "SIGFPE"
	case syscall.SIGILL:
		return "SIGILL"
	}
	if n, ok := osSignalName(s); ok {
		return n
	}
	return "SIG" + strconv.Itoa(int(s))
}

// Dispose tears the group down with the ladder and returns only when the
// leader is reaped and no live process is left in the group (or
// ErrNotQuiescent after the reap bound). It is idempotent: later calls
// return the first call's result.
func (p *Process) Dispose(l Ladder) error {
	p.disposeOnce.Do(func() { p.disposeErr = p.teardown(l) })
	return p.disposeErr
}

func (p *Process) settled() bool { return p.Exited() && p.groupGone() }

func (p *Process) until(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if p.settled() {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
}

func (p *Process) teardown(l Ladder) error {
	if p.stdin != nil {
		p.stdin.Close()
	}
	if p.until(l.Grace) {
		return nil
	}
	p.terminate()
	if p.until(l.Term) {
		return nil
	}
	p.kill()
	<-p.done // SIGKILL cannot be ignored: the leader is reaped
	if p.until(l.Reap) {
		return nil
	}
	return ErrNotQuiescent
}

// Stat holds the fields of /proc/PID/stat that process supervision needs.
type Stat struct {
	State string // R, S, D, Z, X, ...
	PPID  int
	PGRP  int
}

// Live reports whether the process runs (is not a zombie or dead).
func (s Stat) Live() bool { return s.State != "Z" && s.State != "X" }

// ParseStat extracts the state, parent and process group from the text of
// /proc/PID/stat. The command name is in parentheses and may hold anything,
// spaces and ")" included, so fields are counted from the last ")".
func ParseStat(s string) (Stat, bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Stat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return Stat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pg, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		return Stat{}, false
	}
	return Stat{State: f[0], PPID: ppid, PGRP: pg}, true
}

// parseStat is ParseStat's state and process group.
func parseStat(s string) (state string, pgrp int, ok bool) {
	st, ok := ParseStat(s)
	return st.State, st.PGRP, ok
}
