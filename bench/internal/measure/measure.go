// Package measure runs one command and reports its wall time and peak
// memory, the two numbers every row of BENCHMARKS.md is made of.
//
// Peak memory is the larger of two readings. The kernel's rusage maxrss
// (what /usr/bin/time -f %M prints) is exact but covers only the largest
// single process of the tree; harnesses that spawn helpers (language
// servers, workers) would look smaller than they are, so the tree's summed
// RSS is also sampled while the command runs. For a single-process harness
// the two agree up to the sampling interval.
package measure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Result is one measured run.
type Result struct {
	Wall time.Duration
	// MaxRSS is the rusage maxrss of the command and its reaped
	// descendants (the largest single process), in KiB.
	MaxRSS int64
	// TreeRSS is the largest summed RSS of the command's process tree seen
	// by sampling, in KiB (0 when sampling was off or saw nothing).
	TreeRSS int64
	// ExitCode is the command's exit status (-1 when killed by a signal).
	ExitCode int
	TimedOut bool
}

// PeakKiB is the run's peak memory: the larger of MaxRSS and TreeRSS.
func (r Result) PeakKiB() int64 { return max(r.MaxRSS, r.TreeRSS) }

// Options tune Run.
type Options struct {
	// Timeout kills the command's process group after this long (0: none).
	Timeout time.Duration
	// Sample is the tree-RSS sampling interval; 0 turns sampling off.
	Sample time.Duration
}

// Run starts cmd in its own process group, waits for it and measures it.
// cmd must not have been started. Whatever the command left running in its
// process group is killed before Run returns, so no run leaks into the next.
func Run(ctx context.Context, cmd *exec.Cmd, opts Options) (Result, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	var res Result
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return res, err
	}
	pid := cmd.Process.Pid
	defer syscall.Kill(-pid, syscall.SIGKILL) // the group, started by us

	done := make(chan struct{})
	peak := make(chan int64, 1)
	if opts.Sample > 0 {
		go func() { peak <- sampleTree(pid, opts.Sample, done) }()
	} else {
		peak <- 0
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
	err := cmd.Wait()
	res.Wall = time.Since(start)
	stop()
	if timer != nil {
		timer.Stop()
	}
	close(done)
	res.TreeRSS = <-peak
	select {
	case res.TimedOut = <-timedOut:
	default:
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.MaxRSS = ru.Maxrss // KiB on Linux
	}
	res.ExitCode = cmd.ProcessState.ExitCode()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return res, err
	}
	return res, nil
}

// sampleTree sums the RSS of pid and its descendants every interval until
// done, and returns the largest sum in KiB.
func sampleTree(pid int, every time.Duration, done <-chan struct{}) int64 {
	page := int64(os.Getpagesize()) / 1024
	var best int64
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		var sum int64
		for _, p := range tree(pid) {
			sum += residentPages(p) * page
		}
		best = max(best, sum)
		select {
		case <-done:
			return best
		case <-t.C:
		}
	}
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
