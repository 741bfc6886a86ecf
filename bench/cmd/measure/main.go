//go:build linux

// Command measure runs a command and prints its wall time and peak memory:
// a dependency-free stand-in for /usr/bin/time -f '%e %M' with millisecond
// wall times, the command's own peak RSS (VmHWM) and its process tree's
// summed RSS (see package measure for why not rusage maxrss).
//
//	go run ./bench/cmd/measure [-n 5] [-timeout 2m] -- reins version
//
// With -n above 1 it prints one line per run and then the median and range.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/reinsdev/reins/bench/internal/measure"
)

func main() {
	n := flag.Int("n", 1, "runs")
	timeout := flag.Duration("timeout", 5*time.Minute, "kill a run after this long")
	sample := flag.Duration("sample", 2*time.Millisecond, "memory sampling interval (0: wall time only)")
	quiet := flag.Bool("q", false, "discard the command's stdout and stderr")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: measure [-n N] [-timeout D] [-sample D] [-q] -- COMMAND [ARGS...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 || *n < 1 {
		flag.Usage()
		os.Exit(2)
	}
	var walls, peaks []float64
	for i := 0; i < *n; i++ {
		cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
		if !*quiet {
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		}
		r, err := measure.Run(context.Background(), cmd, measure.Options{Timeout: *timeout, Sample: *sample})
		if err != nil {
			fmt.Fprintln(os.Stderr, "measure:", err)
			os.Exit(1)
		}
		wall := float64(r.Wall.Microseconds()) / 1000
		peak := float64(r.PeakKiB()) / 1024
		walls, peaks = append(walls, wall), append(peaks, peak)
		fmt.Fprintf(os.Stderr, "run %d: wall %.2f ms, peak RSS %.1f MiB (own VmHWM %.1f, tree %.1f), exit %d%s\n",
			i+1, wall, peak, float64(r.HWM)/1024, float64(r.TreeRSS)/1024, r.ExitCode, map[bool]string{true: " (timed out)"}[r.TimedOut])
	}
	if *n > 1 {
		fmt.Fprintf(os.Stderr, "median (min–max): wall %s ms, peak RSS %s MiB\n",
			measure.Summarize(walls).String(2), measure.Summarize(peaks).String(1))
	}
}
