// Command otelexit measures what a traced run's collector adds to its
// exit (BENCHMARKS.md, "Telemetry: a dead collector at exit"; issue 33):
// the same two-step `reins run` (a read, then an answer, from an
// in-process mock model) with telemetry off and with
// OTEL_EXPORTER_OTLP_ENDPOINT at a collector that is down (connection
// refused), never answers, answers 500, or answers 200 — the modes
// alternating run by run after a warm-up — and prints each mode's median
// and range of wall time and of the time from the answer on stdout to the
// exit (the exit's own cost, less noisy on a loaded machine), and their
// medians minus off's.
//
//	go build -o /tmp/reins ./cmd/reins && go run ./bench/cmd/otelexit -reins /tmp/reins -n 21
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reinsdev/reins/internal/llm/mock"
)

const script = `
replies:
  - match: go
    toolCalls: [{id: c1, name: read, arguments: {path: a.txt}}]
    repeat: true
  - match: hello
    text: done
    repeat: true
`

func main() {
	reins := flag.String("reins", "reins", "the reins binary")
	n := flag.Int("n", 15, "measured runs per mode (after one warm-up round)")
	flag.Parse()
	if err := run(*reins, *n); err != nil {
		fmt.Fprintln(os.Stderr, "otelexit:", err)
		os.Exit(1)
	}
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func run(reins string, n int) error {
	sc, err := mock.Parse([]byte(script))
	if err != nil {
		return err
	}
	url, _, stop := mock.StartTest(sc)
	defer stop()

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	refused := "http://" + l.Addr().String()
	l.Close()
	release := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer silent.Close()
	defer close(release) // before Close, which waits for the handlers
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "broken", http.StatusInternalServerError)
	}))
	defer failing.Close()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{}"))
	}))
	defer ok.Close()
	modes := []struct{ name, endpoint string }{
		{"off", ""}, {"down (refused)", refused}, {"never answers", silent.URL}, {"500", failing.URL}, {"200", ok.URL},
	}

	work, err := os.MkdirTemp("", "otelexit-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	cwd, home := filepath.Join(work, "cwd"), filepath.Join(work, "home")
	os.MkdirAll(cwd, 0o755)
	os.MkdirAll(home, 0o755)
	if err := os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		return err
	}
	// once runs reins and returns its wall time and the time from the
	// answer's first byte on stdout to the process's exit: the exit's
	// own cost (telemetry's final flush among it).
	once := func(endpoint string) (wall, exit time.Duration, err error) {
		cmd := exec.Command(reins, "run", "-m", "openai/test", "--base-url", url, "--sandbox", "off", "go")
		cmd.Dir = cwd
		env := []string{"REINS_HOME=" + home, "OPENAI_API_KEY=", "TRACEPARENT="}
		if endpoint != "" {
			env = append(env, "OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint)
		}
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return 0, 0, err
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			return 0, 0, err
		}
		var first time.Time
		var got strings.Builder
		buf := make([]byte, 4096)
		for {
			n, rerr := out.Read(buf)
			if n > 0 && first.IsZero() {
				first = time.Now()
			}
			got.Write(buf[:n])
			if rerr != nil {
				break
			}
		}
		err = cmd.Wait()
		end := time.Now()
		if err != nil || !strings.Contains(got.String(), "done") || first.IsZero() {
			return 0, 0, fmt.Errorf("reins run: %v: %s %s", err, got.String(), stderr.String())
		}
		return end.Sub(t0), end.Sub(first), nil
	}
	startLoad := loadavg()
	walls := make([][]float64, len(modes))
	exits := make([][]float64, len(modes))
	for round := -1; round < n; round++ {
		for i, m := range modes {
			w, x, err := once(m.endpoint)
			if err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			if round >= 0 {
				walls[i] = append(walls[i], float64(w.Microseconds())/1000)
				exits[i] = append(exits[i], float64(x.Microseconds())/1000)
			}
		}
	}
	fmt.Printf("two-step `reins run`, %d runs per mode, alternating; load average %s at start, %s at end\n", n, startLoad, loadavg())
	fmt.Printf("| collector | wall median ms (range) | − off | answer→exit median ms (range) | − off |\n|---|---|---|---|---|\n")
	med := func(v []float64) float64 {
		s := slices.Clone(v)
		slices.Sort(s)
		return s[len(s)/2]
	}
	for i, m := range modes {
		fmt.Printf("| %s | %.1f (%.1f–%.1f) | %+.1f | %.2f (%.2f–%.2f) | %+.2f |\n", m.name,
			med(walls[i]), slices.Min(walls[i]), slices.Max(walls[i]), med(walls[i])-med(walls[0]),
			med(exits[i]), slices.Min(exits[i]), slices.Max(exits[i]), med(exits[i])-med(exits[0]))
	}
	return nil
}
