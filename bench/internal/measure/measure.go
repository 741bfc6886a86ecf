//go:build linux

// Package measure runs one command and reports its wall time and peak
// memory, the two numbers every row of BENCHMARKS.md is made of.
//
// Peak memory is not the rusage maxrss that wait4 (and /usr/bin/time run
// from a Go program) reports: a Go parent starts children with vfork, and
// Linux carries the parent's own peak RSS over into the child's maxrss at
// exec, so a 10 MiB reins measured from a 15 MiB benchrun would read 15 MiB.
// Instead the command's VmHWM (the peak RSS of its own address space,
// /proc/PID/status) is read as it exits (see Run), and the summed VmRSS of
// its whole process tree is sampled while it runs, for harnesses that spawn
// helpers. Peak is the larger of the two.
package measure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Result is one measured run.
type Result struct {
	Wall time.Duration
	// HWM is the command's own peak RSS (its last sampled VmHWM), in KiB.
	HWM int64
	// TreeRSS is the largest summed RSS of the command's process tree seen
	// by sampling, in KiB.
	TreeRSS int64
	// ExitCode is the command's exit status (-1 when killed by a signal).
	ExitCode int
	TimedOut bool
}

// PeakKiB is the run's peak memory: the larger of HWM and TreeRSS.
func (r Result) PeakKiB() int64 { return max(r.HWM, r.TreeRSS) }

// Options tune Run.
type Options struct {
	// Timeout kills the command's process group after this long (0: none).
	Timeout time.Duration
	// Sample is the memory sampling interval; 0 turns memory measuring off.
	Sample time.Duration
}

// Run starts cmd in its own process group, waits for it and measures it.
// cmd must not have been started. Whatever the command left running in its
// process group is killed before Run returns, so no run leaks into the next.
//
// When memory is measured (opts.Sample > 0) the command runs under ptrace
// with only its exit traced (PTRACE_O_TRACEEXIT): it stops once, as it
// exits and before its address space is torn down, so its final VmHWM is
// read exactly instead of from the last sample. Signals pass through.
func Run(ctx context.Context, cmd *exec.Cmd, opts Options) (Result, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	traced := opts.Sample > 0
	if traced {
		// ptrace requests must come from the thread that started the child.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cmd.SysProcAttr.Ptrace = true
	}
	var res Result
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return res, err
	}
	pid := cmd.Process.Pid
	defer syscall.Kill(-pid, syscall.SIGKILL) // the group, started by us
	if traced {
		// The child stops with SIGTRAP after its exec; trace its exit only.
		var ws syscall.WaitStatus
		if _, err := wait4(pid, &ws); err != nil || !ws.Stopped() {
			cmd.Wait()
			return res, fmt.Errorf("measure: child did not stop at exec: %v", err)
		}
		if err := syscall.PtraceSetOptions(pid, syscall.PTRACE_O_TRACEEXIT); err != nil {
			return res, fmt.Errorf("measure: ptrace: %w", err)
		}
		if err := syscall.PtraceCont(pid, 0); err != nil {
			return res, fmt.Errorf("measure: ptrace: %w", err)
		}
	}

	done := make(chan struct{})
	peak := make(chan [2]int64, 1)
	if opts.Sample > 0 {
		go func() { peak <- sample(pid, opts.Sample, done) }()
	} else {
		peak <- [2]int64{}
	}
	var timer *time.Timer
	timedOut := make(chan bool, 1)
	if opts.Timeout > 0 {
		timer = time.AfterFunc(opts.Timeout, func() {
			timedOut <- true
			syscall.Kill(-pid, syscall.SIGKILL)
		})
	}
	stop := context.AfterFunc(ctx, func() { syscall.Kill(-pid, syscall.SIGKILL) })
	var exitHWM int64
	var err error
	if traced {
		var code int
		code, exitHWM, err = traceToExit(pid)
		res.Wall = time.Since(start)
		cmd.Wait() // already reaped: this only collects the I/O goroutines
		res.ExitCode = code
	} else {
		err = cmd.Wait()
		res.Wall = time.Since(start)
		res.ExitCode = cmd.ProcessState.ExitCode()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = nil
		}
	}
	stop()
	if timer != nil {
		timer.Stop()
	}
	close(done)
	p := <-peak
	res.HWM, res.TreeRSS = max(p[0], exitHWM), p[1]
	select {
	case res.TimedOut = <-timedOut:
	default:
	}
	return res, err
}

// traceToExit resumes the traced pid through its signals and execs until
// it exits, reading its VmHWM at the exit stop. code is the exit status,
// -1 after a signal.
func traceToExit(pid int) (code int, hwm int64, err error) {
	for {
		var ws syscall.WaitStatus
		if _, err := wait4(pid, &ws); err != nil {
			return -1, hwm, err
		}
		switch {
		case ws.Exited():
			return ws.ExitStatus(), hwm, nil
		case ws.Signaled():
			return -1, hwm, nil
		case ws.Stopped():
			sig := ws.StopSignal()
			if sig == syscall.SIGTRAP {
				if ws.TrapCause() == syscall.PTRACE_EVENT_EXIT {
					hwm = vmHWM(pid)
				}
				sig = 0 // an exit or exec stop, not a signal to deliver
			}
			if err := syscall.PtraceCont(pid, int(sig)); err != nil && err != syscall.ESRCH {
				return -1, hwm, err
			}
		}
	}
}

func wait4(pid int, ws *syscall.WaitStatus) (int, error) {
	for {
		wpid, err := syscall.Wait4(pid, ws, syscall.WALL, nil)
		if err != syscall.EINTR {
			return wpid, err
		}
	}
}

// sample reads pid's VmHWM every interval, and the summed RSS of pid and
// its descendants every fifth interval (walking the tree costs more), until
// done; it returns the last VmHWM and the largest sum, in KiB.
func sample(pid int, every time.Duration, done <-chan struct{}) [2]int64 {
	page := int64(os.Getpagesize()) / 1024
	var hwm, best int64
	t := time.NewTicker(every)
	defer t.Stop()
	for i := 0; ; i++ {
		if h := vmHWM(pid); h > hwm {
			hwm = h
		}
		if i%5 == 0 {
			var sum int64
			for _, p := range tree(pid) {
				sum += residentPages(p) * page
			}
			best = max(best, sum)
		}
		select {
		case <-done:
			return [2]int64{hwm, best}
		case <-t.C:
		}
	}
}

// vmHWM reads the VmHWM line of /proc/PID/status, in KiB (0 when gone).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	i := bytes.Index(b, []byte("VmHWM:"))
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+len("VmHWM:"):])
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.ParseInt(string(f[0]), 10, 64)
	return n
}

// tree lists pid and its descendants from /proc/PID/task/TID/children.
func tree(pid int) []int {
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(out[i]) + "/task")
		for _, t := range tasks {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(out[i]) + "/task/" + t.Name() + "/children")
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// residentPages reads the second field of /proc/PID/statm.
func residentPages(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.ParseInt(string(f[1]), 10, 64)
	return n
}

// Summary is the median and range of a sample.
type Summary struct {
	N                int
	Median, Min, Max float64
}

// Summarize returns the median, minimum and maximum of xs.
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Summary{N: len(s), Median: m, Min: s[0], Max: s[len(s)-1]}
}

// String formats s as "median (min–max)" with the given precision.
func (s Summary) String(prec int) string {
	if s.N == 0 {
		return "—"
	}
	f := "%." + strconv.Itoa(prec) + "f"
	return fmt.Sprintf(f+" ("+f+"–"+f+")", s.Median, s.Min, s.Max)
}
