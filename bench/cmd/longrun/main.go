//go:build linux

// Command longrun measures what a long session costs (BENCHMARKS.md,
// "Long sessions"): the harness's own CPU per step as the history grows,
// and the peak memory of reins, its in-process mock provider and `reins
// mock-llm` after a long tool loop.
//
// Every step of the loop is the model calling read on the same file (about
// 600 bytes) and the history growing by that call and its result; nothing
// compacts (the model's window is unknown), so the request at step 1,000
// carries the whole history, about 0.9 MB.
//
//   - per-step CPU: the harness runs in this process, as `reins run` does
//     (config, model, session, loop, tools, log), against `reins mock-llm`
//     in its own process on loopback; this process's CPU (user+system,
//     getrusage) is read at every step's start, and the figure at step N is
//     the mean over steps N-20..N-1. The endpoint's CPU is not in it.
//   - peak RSS: `reins run --max-steps N` (the CLI, built as a release is)
//     over HTTP, and the same with the in-process mock provider (`-m
//     mock/...`), measured by bench/internal/measure; mock-llm's own VmHWM
//     read from /proc before it is stopped. The CLI's total CPU is printed
//     too (the figure: 1.86 s for 400 steps on main 14986a5).
//
// Usage: go run ./bench/cmd/longrun -reins bench/bin/reins [-runs 3] [-compare OLD_REINS]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reinsdev/reins/bench/internal/measure"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/session"
)

const script = `replies:
  - match: LOOP-MARK
    repeat: true
    toolCalls: [{name: read, arguments: {path: loop.txt}}]
`

const prompt = "LOOP-MARK read loop.txt, again and again"

var marks = []int{50, 400, 1000}

// profileFrom starts the CPU profile (-cpuprofile) at four fifths of the
// first in-process run: where the history is long.
var profileFrom func()

// window is how many steps before a mark its per-step figure averages.
const window = 20

func main() {
	reins := flag.String("reins", "bench/bin/reins", "the reins binary (mock-llm and the CLI runs)")
	compare := flag.String("compare", "", "another reins binary whose CLI runs are measured the same way")
	runs := flag.Int("runs", 3, "runs of each measurement (medians are printed)")
	steps := flag.Int("steps", 1000, "steps of the loop")
	cli := flag.Bool("cli", true, "also measure the CLI runs (peak RSS, total CPU)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the in-process runs to this file")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		check(err)
		profileFrom = func() { check(pprof.StartCPUProfile(f)) }
		defer pprof.StopCPUProfile()
	}
	work, err := os.MkdirTemp("", "longrun-")
	check(err)
	defer os.RemoveAll(work)
	ws := filepath.Join(work, "ws")
	check(os.MkdirAll(ws, 0o755))
	check(os.WriteFile(filepath.Join(ws, "loop.txt"), []byte("LOOP-MARK "+strings.Repeat("lorem ipsum ", 48)+"\n"), 0o644))
	sc := filepath.Join(work, "loop.yaml")
	check(os.WriteFile(sc, []byte(script), 0o644))

	fmt.Printf("in process, %d runs of %d steps: harness CPU per step (ms, mean of the %d steps before)\n", *runs, *steps, window)
	per, plain := map[int][]float64{}, map[int][]float64{}
	var sizes map[int]int
	for range *runs {
		var ms map[int]float64
		ms, sizes = inProcess(*reins, sc, ws, work, *steps)
		for n, v := range ms {
			per[n] = append(per[n], v)
		}
		for n, v := range plainPost(*reins, sc, sizes) {
			plain[n] = append(plain[n], v)
		}
	}
	for _, n := range marks {
		if n <= *steps {
			fmt.Printf("  step %5d: %s; request %d bytes, whose plain HTTP round trip alone costs %s\n",
				n, measure.Summarize(per[n]).String(3), sizes[n], measure.Summarize(plain[n]).String(3))
		}
	}
	if !*cli {
		return
	}
	bins := []string{*reins}
	if *compare != "" {
		bins = append(bins, *compare)
	}
	for _, bin := range bins {
		fmt.Printf("\nCLI %s, %d runs each (median (min–max)):\n", bin, *runs)
		for _, n := range marks {
			if n > *steps {
				continue
			}
			var cpu, rss, mockRSS, inprocRSS, inprocCPU []float64
			for range *runs {
				c, r, m := overHTTP(bin, sc, ws, work, n)
				cpu, rss, mockRSS = append(cpu, c), append(rss, r), append(mockRSS, m)
				c, r = inProcessMock(bin, sc, ws, work, n)
				inprocCPU, inprocRSS = append(inprocCPU, c), append(inprocRSS, r)
			}
			fmt.Printf("  %4d steps: reins CPU %s s, peak RSS %s MiB; mock-llm peak RSS %s MiB; in-process mock: CPU %s s, peak RSS %s MiB\n",
				n, measure.Summarize(cpu).String(2), measure.Summarize(rss).String(1), measure.Summarize(mockRSS).String(1),
				measure.Summarize(inprocCPU).String(2), measure.Summarize(inprocRSS).String(1))
		}
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "longrun:", err)
		os.Exit(1)
	}
}

// startMock starts `reins mock-llm` and returns its URL and process.
func startMock(bin, sc string) (string, *exec.Cmd) {
	cmd := exec.Command(bin, "mock-llm", "--script", sc)
	out, err := cmd.StdoutPipe()
	check(err)
	check(cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	check(err)
	i := strings.Index(line, "http://")
	if i < 0 {
		check(fmt.Errorf("mock-llm said %q", line))
	}
	return strings.TrimSpace(line[i:]), cmd
}

func stopMock(cmd *exec.Cmd) {
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
}

// hwmMiB is a live process's VmHWM.
func hwmMiB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	check(err)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sizer records the size of every request body.
type sizer struct {
	rt    http.RoundTripper
	sizes *[]int
}

func (s sizer) RoundTrip(r *http.Request) (*http.Response, error) {
	*s.sizes = append(*s.sizes, int(r.ContentLength))
	return s.rt.RoundTrip(r)
}

// plainPost is the floor under the harness's per-step figure: this
// process's CPU (ms) for one POST of a body of each mark's request size to
// mock-llm by a plain client, reading the answer to its end; mean of 20.
func plainPost(bin, sc string, sizes map[int]int) map[int]float64 {
	url, mock := startMock(bin, sc)
	defer stopMock(mock)
	client := &http.Client{}
	defer client.CloseIdleConnections()
	out := map[int]float64{}
	for n, size := range sizes {
		head := `{"model":"bench","stream":true,"messages":[{"role":"user","content":"LOOP-MARK `
		body := []byte(head + strings.Repeat("x", max(0, size-len(head)-3)) + `"}]}`)
		const reps = 20
		start := cpuNow()
		for range reps {
			resp, err := client.Post(url+"/chat/completions", "application/json", bytes.NewReader(body))
			check(err)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		out[n] = float64(cpuNow()-start) / reps / 1e6
	}
	return out
}

// inProcess runs the loop in this process against mock-llm and returns
// the CPU per step, in ms, before each mark, and the request size at
// each mark.
func inProcess(bin, sc, ws, work string, steps int) (map[int]float64, map[int]int) {
	url, mock := startMock(bin, sc)
	defer stopMock(mock)
	home, err := os.MkdirTemp(work, "home-")
	check(err)
	h, err := harness.New(harness.Options{Home: home, Cwd: ws, Getenv: func(string) string { return "" }})
	check(err)
	defer h.Close()
	var sizes []int
	h.HTTP = &http.Client{Transport: sizer{http.DefaultTransport, &sizes}}
	m, err := h.ResolveModel("openai/bench", url)
	check(err)
	at := make([]time.Duration, 0, steps+1)
	sess, err := h.NewSession(harness.SessionOptions{Model: m, MaxSteps: steps, Observe: func(_ session.Header, e session.Event) {
		if e.Type == session.TypeStepStart {
			at = append(at, cpuNow())
			if len(at) == steps*4/5 && profileFrom != nil {
				profileFrom()
				profileFrom = nil
			}
		}
	}})
	check(err)
	res := sess.Run(context.Background(), prompt)
	at = append(at, cpuNow())
	check(sess.Close())
	if res.Failure == nil || res.Failure.Code != "MAX_STEPS" || len(at) != steps+1 {
		check(fmt.Errorf("the loop ended %s %+v after %d steps", res.Reason, res.Failure, len(at)-1))
	}
	out, size := map[int]float64{}, map[int]int{}
	for _, n := range marks {
		if n <= steps {
			out[n] = float64(at[n]-at[n-window]) / window / 1e6
			size[n] = sizes[n-1]
		}
	}
	return out, size
}

// overHTTP runs `reins run` for n steps against a fresh mock-llm: the CLI's
// CPU (s) from a bare run, its peak RSS (MiB) from a measured one, and
// mock-llm's peak RSS (MiB) after the measured run.
func overHTTP(bin, sc, ws, work string, n int) (cpu, rss, mockRSS float64) {
	url, mock := startMock(bin, sc)
	defer stopMock(mock)
	args := []string{"run", "--json", "-m", "openai/bench", "--base-url", url, "--max-steps", strconv.Itoa(n), prompt}
	cpu = bare(bin, ws, work, nil, args)
	rss = measured(bin, ws, work, nil, args)
	return cpu, rss, hwmMiB(mock.Process.Pid)
}

// inProcessMock runs `reins run -m mock/bench` (the in-process mock
// provider) for n steps: its CPU (s) and peak RSS (MiB).
func inProcessMock(bin, sc, ws, work string, n int) (cpu, rss float64) {
	env := []string{"REINS_MOCK_SCRIPT=" + sc}
	args := []string{"run", "--json", "-m", "mock/bench", "--max-steps", strconv.Itoa(n), prompt}
	return bare(bin, ws, work, env, args), measured(bin, ws, work, env, args)
}

func command(bin, ws, work string, env, args []string) *exec.Cmd {
	home, err := os.MkdirTemp(work, "home-")
	check(err)
	cmd := exec.Command(bin, args...)
	cmd.Dir = ws
	cmd.Env = append(append(os.Environ(), "REINS_HOME="+home, "OPENAI_API_KEY="), env...)
	return cmd
}

// checkRun checks that a run did its n steps: it ends MAX_STEPS.
func checkRun(out []byte) {
	var r struct {
		Error *struct{ Code string } `json:"error"`
	}
	if json.Unmarshal(out, &r) != nil || r.Error == nil || r.Error.Code != "MAX_STEPS" {
		check(fmt.Errorf("the run did not end MAX_STEPS: %.300s", out))
	}
}

func bare(bin, ws, work string, env, args []string) float64 {
	cmd := command(bin, ws, work, env, args)
	out, _ := cmd.Output()
	checkRun(out)
	st := cmd.ProcessState
	return (st.UserTime() + st.SystemTime()).Seconds()
}

func measured(bin, ws, work string, env, args []string) float64 {
	cmd := command(bin, ws, work, env, args)
	var out strings.Builder
	cmd.Stdout = &out
	res, err := measure.Run(context.Background(), cmd, measure.Options{Sample: 10 * time.Millisecond, Timeout: 10 * time.Minute})
	check(err)
	checkRun([]byte(out.String()))
	return float64(res.PeakKiB()) / 1024
}
