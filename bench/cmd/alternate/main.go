// Command alternate times several commands run in turn, one run of each
// per round, the order reversed every other round (A B C, C B A, …), and
// prints each one's median wall time, its quartiles and its ratio to the
// first command's median. On a shared virtual machine whose speed drifts
// by a third within minutes, blocks of runs of one binary compare that
// drift, not the binaries; single runs interleaved over a few hundred
// rounds compare the binaries (BENCHMARKS.md, "The ninth session").
//
//	go run ./bench/cmd/alternate -n 300 -- /a/reins version -- /b/reins version
//
// Each command gets its own REINS_HOME, a fresh folder under -home (so one
// binary's sessions never sit in another's), and its stdout is discarded.
// A run that exits non-zero stops it.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 300, "rounds")
	home := flag.String("home", os.TempDir(), "folder for each command's REINS_HOME (its file system is the session log's)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: alternate [-n N] [-home DIR] -- COMMAND [ARGS...] [-- COMMAND [ARGS...]]...")
		flag.PrintDefaults()
	}
	flag.Parse()
	cmds := split(flag.Args())
	if len(cmds) == 0 || *n < 1 {
		flag.Usage()
		os.Exit(2)
	}
	homes := make([]string, len(cmds))
	for i := range cmds {
		h, err := os.MkdirTemp(*home, "alternate-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "alternate:", err)
			os.Exit(1)
		}
		defer os.RemoveAll(h)
		homes[i] = h
	}
	walls := make([][]float64, len(cmds))
	cpus := make([][]float64, len(cmds)) // user + system time of the command itself
	for r := 0; r < *n; r++ {
		order := make([]int, len(cmds))
		for i := range order {
			order[i] = i
			if r%2 == 1 {
				order[i] = len(cmds) - 1 - i
			}
		}
		for _, i := range order {
			c := exec.Command(cmds[i][0], cmds[i][1:]...)
			c.Env = append(os.Environ(), "REINS_HOME="+homes[i])
			c.Stderr = os.Stderr
			start := time.Now()
			if err := c.Run(); err != nil {
				fmt.Fprintf(os.Stderr, "alternate: %s: %v\n", strings.Join(cmds[i], " "), err)
				os.Exit(1)
			}
			walls[i] = append(walls[i], float64(time.Since(start).Microseconds())/1000)
			cpus[i] = append(cpus[i], float64((c.ProcessState.UserTime()+c.ProcessState.SystemTime()).Microseconds())/1000)
		}
	}
	base := quantile(walls[0], 0.5)
	for i, w := range walls {
		m := quantile(w, 0.5)
		fmt.Printf("%s: median %.2f ms (p25 %.2f, p75 %.2f), %.3f× the first; CPU median %.2f ms\n",
			strings.Join(cmds[i], " "), m, quantile(w, 0.25), quantile(w, 0.75), m/base, quantile(cpus[i], 0.5))
	}
}

// split cuts args at each "--" into commands.
func split(args []string) [][]string {
	var out [][]string
	for len(args) > 0 {
		i := slices.Index(args, "--")
		if i < 0 {
			i = len(args)
		}
		if i > 0 {
			out = append(out, args[:i])
		}
		args = args[min(i+1, len(args)):]
	}
	return out
}

// quantile returns the q-quantile of xs, by the nearest rank.
func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}
