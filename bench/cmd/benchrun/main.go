//go:build linux

// Command benchrun runs the side-by-side benchmarks of BENCHMARKS.md: the
// same workloads, served by the same `reins mock-llm` scripts, for reins
// and for the peer harnesses installed in bench/peers, alternating the
// harnesses run by run (A B C A B C) after a warm-up, and prints the table
// of medians, ranges and reins/peer ratios.
//
// bench/run.sh builds everything and calls it; see BENCHMARKS.md.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

type config struct {
	reins    string // the reins binary under test (also serves mock-llm)
	compare  string // another reins binary run as "reins-before" (optional)
	peers    string // bench/peers
	scripts  string // bench/scripts
	runs     int
	only     map[string]bool
	timeout  time.Duration
	sample   time.Duration
	keep     bool
	jsonOut  string
	work     string
	verbose  bool
	harnessF map[string]bool
}

func main() {
	var c config
	var only, harnesses, writeScripts string
	quick := flag.Bool("quick", false, "3 measured runs per harness instead of -runs")
	flag.StringVar(&c.reins, "reins", "bench/bin/reins", "the reins binary to measure")
	flag.StringVar(&c.compare, "compare", "", "also run this reins binary, as reins-before (e.g. a build without a change)")
	flag.StringVar(&c.peers, "peers", "bench/peers", "the directory holding the peers' node_modules")
	flag.StringVar(&c.scripts, "scripts", "bench/scripts", "the mock scripts")
	flag.IntVar(&c.runs, "runs", 9, "measured runs per harness and workload (after one warm-up)")
	flag.StringVar(&only, "only", "", "comma-separated workloads to run (startup,two-step,loop20,delegate4,children100)")
	flag.StringVar(&harnesses, "harness", "", "comma-separated harnesses to run (reins,pi,opencode,codex,gemini,dsh); default all installed")
	flag.DurationVar(&c.timeout, "timeout", 3*time.Minute, "kill a run after this long")
	flag.DurationVar(&c.sample, "sample", 2*time.Millisecond, "memory sampling interval (VmHWM; the process tree every 5th)")
	flag.BoolVar(&c.keep, "keep", false, "keep the work directory")
	flag.StringVar(&c.jsonOut, "json", "", "also write every run as JSON to this file")
	flag.BoolVar(&c.verbose, "v", false, "print every run")
	flag.StringVar(&writeScripts, "write-scripts", "", "write the generated mock scripts into this directory and exit")
	flag.Parse()
	if writeScripts != "" {
		if err := writeAll(writeScripts); err != nil {
			fatal(err)
		}
		return
	}
	if *quick {
		c.runs = 3
	}
	c.only = set(only)
	c.harnessF = set(harnesses)
	for _, p := range []*string{&c.reins, &c.peers, &c.scripts, &c.compare} {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			fatal(err)
		}
		*p = abs
	}
	if _, err := os.Stat(c.reins); err != nil {
		fatal(fmt.Errorf("reins binary: %w (bench/run.sh builds it)", err))
	}
	work, err := os.MkdirTemp("", "reins-bench-")
	if err != nil {
		fatal(err)
	}
	c.work = work
	if !c.keep {
		defer os.RemoveAll(work)
	}
	ctx, stop := signalContext()
	defer stop()
	if err := run(ctx, &c); err != nil {
		fatal(err)
	}
}

func set(s string) map[string]bool {
	if s == "" {
		return nil
	}
	m := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		m[strings.TrimSpace(f)] = true
	}
	return m
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "benchrun:", err)
	os.Exit(1)
}

func writeAll(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, body := range scripts() {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// mockServer is one `reins mock-llm` process.
type mockServer struct {
	cmd *exec.Cmd
	url string // base URL, ending in /v1
}

// startMock starts `reins mock-llm --script script` on a free loopback port
// and waits for the address it prints.
func startMock(ctx context.Context, reins, script string) (*mockServer, error) {
	cmd := exec.CommandContext(ctx, reins, "mock-llm", "--addr", "127.0.0.1:0", "--script", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		io.Copy(io.Discard, out)
	}()
	select {
	case l, ok := <-line:
		i := strings.Index(l, "http://")
		if !ok || i < 0 {
			cmd.Process.Kill()
			cmd.Wait()
			return nil, fmt.Errorf("mock-llm did not print its address (got %q)", l)
		}
		return &mockServer{cmd: cmd, url: strings.TrimSpace(l[i:]) + "/v1"}, nil
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		return nil, errors.New("mock-llm did not start within 10s")
	}
}

// stop ends the mock server this program started, by its pid.
func (m *mockServer) stop() {
	m.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { m.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		m.cmd.Process.Kill()
		<-done
	}
}

// runRecord is one measured (or warm-up) run, as written to -json.
type runRecord struct {
	Workload string  `json:"workload"`
	Harness  string  `json:"harness"`
	Iter     int     `json:"iter"` // 0 is the warm-up
	WallMs   float64 `json:"wallMs"`
	PeakMiB  float64 `json:"peakMiB"`
	HWMMiB   float64 `json:"vmHWMMiB"`
	TreeMiB  float64 `json:"treeRSSMiB"`
	OK       bool    `json:"ok"`
	Problem  string  `json:"problem,omitempty"`
}

func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signalNotify(ch)
	go func() {
		select {
		case <-ch:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

func writeJSON(path string, recs []runRecord) error {
	b, err := json.MarshalIndent(recs, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
