//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/reinsdev/reins/bench/internal/measure"
	"github.com/reinsdev/reins/internal/llm/mock"
)

// workload is one row group of the table.
type workload struct {
	name    string
	title   string
	startup bool   // measure the version command instead of a task
	script  string // script base name: <script>.<harness>.yaml
	prompt  string
	expect  string
	files   map[string]string
	// reinsOnly variants: the children100 workload compares two prompts.
	variants []variant
	delegate bool // needs a subagent tool
}

type variant struct{ name, prompt, expect string }

func workloads() []*workload {
	loopFiles := map[string]string{}
	for i := 1; i <= loopSteps; i++ {
		loopFiles[stepFile(i)] = fmt.Sprintf("Step %d of %d. Marker for the next step: %s\n", i, loopSteps, afterMark(i))
	}
	child := map[string]string{"child.txt": "The child file. " + markChildFile + "\n"}
	return []*workload{
		{name: "startup", title: "(1) startup: version", startup: true},
		{name: "two-step", title: "(2) two-step task: read, then answer", script: "two-step",
			prompt: markTwoStep + " Read notes.txt and tell me what it says.", expect: answerTwoStep,
			files: map[string]string{"notes.txt": "Hello from the notes. " + markNotes + "\n"}},
		{name: "loop20", title: "(3) 20-step tool loop", script: "loop20",
			prompt: markLoop + " Read steps/01.txt and follow the markers to the end.", expect: answerLoop, files: loopFiles},
		{name: "delegate4", title: "(4) parent delegating to 4 children in parallel", script: "delegate4", delegate: true,
			prompt: markDelegate + " Delegate reading child.txt to four subagents at once.", expect: answerDelegate, files: child},
		{name: "children100", title: "(5) 100 in-process children at once (reins)", script: "children100", delegate: true,
			files: child, variants: []variant{
				{"baseline (no children)", markBaseline + " Answer at once.", answerBaseline},
				{"100 children", markMany + " Delegate reading child.txt to a hundred subagents at once.", answerMany},
			}},
	}
}

// sample is one harness's (or variant's) runs in one workload.
type sample struct {
	label       string
	walls, rss  []float64
	fails       int
	lastProblem string
}

func run(ctx context.Context, c *config) error {
	hs := c.harnesses()
	var recs []runRecord
	var report strings.Builder
	host := machine()
	fmt.Fprintf(&report, "%s\n", host)
	fmt.Fprintf(&report, "runs: %d measured per harness and workload after one warm-up, alternating harnesses run by run\n", c.runs)
	if c.sample > 0 {
		report.WriteString("wall time from bare runs; peak RSS from a second, memory-measured run right after each\n")
	}
	report.WriteString("\n")
	fmt.Fprintf(&report, "| workload | harness | wall ms, median (min–max) | peak RSS MiB, median (min–max) | reins/peer wall | reins/peer RSS | ok |\n")
	fmt.Fprintf(&report, "|---|---|---|---|---|---|---|\n")
	var derived []string
	var notes []string
	noted := map[string]bool{}

	var versionMedian float64
	for _, w := range workloads() {
		if c.only != nil && !c.only[w.name] {
			continue
		}
		fmt.Fprintf(os.Stderr, "== %s\n", w.title)
		ws := filepath.Join(c.work, "ws-"+w.name)
		if err := writeFiles(ws, w.files); err != nil {
			return err
		}
		type contender struct {
			h     *harness
			v     variant
			label string
			s     *sample
		}
		var cs []*contender
		for _, h := range hs {
			if h.missing != "" {
				if !noted[h.name] {
					noted[h.name] = true
					notes = append(notes, h.name+": "+h.missing)
				}
				continue
			}
			for _, n := range h.notes {
				if !noted[n] {
					noted[n] = true
					notes = append(notes, n)
				}
			}
			switch {
			case w.startup:
			case h.task == nil:
				continue
			case w.variants != nil:
				if h.scriptName() != "reins" {
					continue
				}
			case w.delegate && harnessTools[h.scriptName()].delegate == "":
				fmt.Fprintf(&report, "| %s | %s | no subagents | | | | |\n", w.name, h.name)
				continue
			}
			if w.variants != nil {
				for _, v := range w.variants {
					cs = append(cs, &contender{h: h, v: v, label: h.name + ": " + v.name, s: &sample{label: v.name}})
				}
				continue
			}
			cs = append(cs, &contender{h: h, v: variant{"", w.prompt, w.expect}, label: h.name, s: &sample{label: h.name}})
		}
		// The endpoint alone, replaying reins's requests (two-step only).
		var replay []mock.Recorded
		if w.name == "two-step" && len(cs) > 0 && cs[0].h.name == "reins" {
			var err error
			if replay, err = recordRequests(ctx, c, cs[0].h, w, ws); err != nil {
				return fmt.Errorf("recording reins's requests: %w", err)
			}
			cs = append(cs, &contender{label: "endpoint", s: &sample{label: "endpoint alone"}})
		}

		for iter := 0; iter <= c.runs; iter++ {
			for _, ct := range cs {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				var r measure.Result
				var problem string
				var err error
				switch {
				case ct.h == nil:
					r, problem, err = replayEndpoint(ctx, c, w, replay)
				default:
					// Wall time and memory come from two runs back to back:
					// measuring memory (ptrace stops on every signal the
					// runtime sends itself, /proc reads every few ms) slowed
					// a 30 ms reins run by 7 ms, so the timed run is bare.
					r, problem, err = c.once(ctx, ct.h, w, ct.v, ws, 0)
					if err == nil && problem == "" && c.sample > 0 {
						var m measure.Result
						m, problem, err = c.once(ctx, ct.h, w, ct.v, ws, c.sample)
						r.HWM, r.TreeRSS = m.HWM, m.TreeRSS
					}
				}
				if err != nil {
					return fmt.Errorf("%s %s: %w", w.name, ct.label, err)
				}
				rec := runRecord{Workload: w.name, Harness: ct.label, Iter: iter,
					WallMs: float64(r.Wall.Microseconds()) / 1000, PeakMiB: float64(r.PeakKiB()) / 1024,
					HWMMiB: float64(r.HWM) / 1024, TreeMiB: float64(r.TreeRSS) / 1024, OK: problem == "", Problem: problem}
				recs = append(recs, rec)
				if c.verbose || problem != "" {
					fmt.Fprintf(os.Stderr, "  %-28s #%d  %8.1f ms  %7.1f MiB  %s\n", ct.label, iter, rec.WallMs, rec.PeakMiB, problem)
				}
				if iter == 0 {
					continue // warm-up
				}
				if problem != "" {
					ct.s.fails++
					ct.s.lastProblem = problem
					continue
				}
				ct.s.walls = append(ct.s.walls, rec.WallMs)
				if r.PeakKiB() > 0 {
					ct.s.rss = append(ct.s.rss, rec.PeakMiB)
				}
			}
		}

		// Rows and ratios against reins (the first contender).
		var ref *sample
		for _, ct := range cs {
			if ct.h != nil && ct.h.name == "reins" && ref == nil {
				ref = ct.s
			}
		}
		for _, ct := range cs {
			sw, sr := measure.Summarize(ct.s.walls), measure.Summarize(ct.s.rss)
			rw, rr := "", ""
			if ref != nil && ct.s != ref && ct.h != nil && ct.h.name != "reins" && sw.N > 0 {
				refW, refR := measure.Summarize(ref.walls), measure.Summarize(ref.rss)
				rw = ratio(refW.Median, sw.Median)
				rr = ratio(refR.Median, sr.Median)
			}
			ok := fmt.Sprintf("%d/%d", len(ct.s.walls), len(ct.s.walls)+ct.s.fails)
			if ct.s.fails > 0 {
				ok += " (" + ct.s.lastProblem + ")"
			}
			rssCol := sr.String(1)
			if ct.h == nil {
				rssCol = "n/a (in benchrun)"
			}
			fmt.Fprintf(&report, "| %s | %s | %s | %s | %s | %s | %s |\n", w.name, ct.label, sw.String(1), rssCol, rw, rr, ok)
		}

		// Derived numbers.
		switch w.name {
		case "startup":
			if ref != nil {
				versionMedian = measure.Summarize(ref.walls).Median
			}
		case "two-step":
			if ref != nil && len(cs) > 0 && cs[len(cs)-1].h == nil {
				rm := measure.Summarize(ref.walls).Median
				em := measure.Summarize(cs[len(cs)-1].s.walls).Median
				line := fmt.Sprintf("two-step harness time over the endpoint's own latency: %.1f ms (reins run %.1f ms − endpoint alone %.1f ms)", rm-em, rm, em)
				if versionMedian > 0 {
					line += fmt.Sprintf("; %.1f ms beyond process start (− reins version %.1f ms)", rm-em-versionMedian, versionMedian)
				}
				derived = append(derived, line)
			}
		case "children100":
			for i := 0; i+1 < len(cs); i += 2 {
				b, m := measure.Summarize(cs[i].s.rss), measure.Summarize(cs[i+1].s.rss)
				if b.N > 0 && m.N > 0 {
					derived = append(derived, fmt.Sprintf("%s, 100 concurrent in-process children: %.1f MiB peak − %.1f MiB baseline = %.2f MiB per child",
						cs[i].h.name, m.Median, b.Median, (m.Median-b.Median)/manyChildren))
				}
			}
		}
	}
	report.WriteString("\n")
	for _, d := range derived {
		report.WriteString("- " + d + "\n")
	}
	if len(notes) > 0 {
		report.WriteString("\nNotes:\n")
		for _, n := range notes {
			report.WriteString("- " + n + "\n")
		}
	}
	fmt.Print(report.String())
	if c.jsonOut != "" {
		return writeJSON(c.jsonOut, recs)
	}
	return nil
}

func ratio(reins, peer float64) string {
	if peer <= 0 || reins <= 0 {
		return ""
	}
	if r := peer / reins; r < 10 {
		return fmt.Sprintf("1/%.1f", r)
	}
	return fmt.Sprintf("1/%.0f", peer/reins)
}

func writeFiles(dir string, files map[string]string) error {
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return os.MkdirAll(dir, 0o755)
}

// reinsConfig is the extra config layer for the children100 workload.
func (c *config) reinsConfig() (string, error) {
	p := filepath.Join(c.work, "reins-children.yaml")
	return p, os.WriteFile(p, []byte("subagents:\n  maxParallel: 100\n"), 0o644)
}

// once measures one run of harness h in workload w, sampling memory every
// sample (0: wall time only); problem is non-empty when the run did not do
// the task (wrong exit status or answer).
func (c *config) once(ctx context.Context, h *harness, w *workload, v variant, ws string, sample time.Duration) (measure.Result, string, error) {
	var cmd *exec.Cmd
	var srv *mockServer
	if w.startup {
		cmd = h.version()
	} else {
		var err error
		script := filepath.Join(c.scripts, w.script+"."+h.scriptName()+".yaml")
		if srv, err = startMock(ctx, c.reins, script); err != nil {
			return measure.Result{}, "", err
		}
		defer srv.stop()
		var extra []string
		if w.variants != nil {
			cfg, err := c.reinsConfig()
			if err != nil {
				return measure.Result{}, "", err
			}
			extra = []string{"--config", cfg}
		}
		if cmd, err = h.task(ws, srv.url, v.prompt, extra); err != nil {
			return measure.Result{}, "", err
		}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	r, err := measure.Run(ctx, cmd, measure.Options{Timeout: c.timeout, Sample: sample})
	if err != nil {
		return r, "", err
	}
	switch {
	case r.TimedOut:
		return r, "timed out", nil
	case r.ExitCode != 0:
		return r, fmt.Sprintf("exit %d: %.200s", r.ExitCode, strings.TrimSpace(errb.String())), nil
	case !w.startup && !strings.Contains(out.String(), v.expect):
		return r, fmt.Sprintf("unexpected answer: %.200q", out.String()), nil
	}
	return r, "", nil
}

// recordRequests runs reins once, unmeasured, against an in-process mock
// with the same script and returns the requests it sent (path, headers and
// body: the wire reins chose decides the path), for the endpoint-alone
// replay.
func recordRequests(ctx context.Context, c *config, h *harness, w *workload, ws string) ([]mock.Recorded, error) {
	sc, err := mock.Load(filepath.Join(c.scripts, w.script+".reins.yaml"))
	if err != nil {
		return nil, err
	}
	m := mock.NewServer(sc)
	srv := httptest.NewServer(m)
	defer srv.Close()
	cmd, err := h.task(ws, srv.URL+"/v1", w.prompt, nil)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Run(); err != nil {
		return nil, err
	}
	reqs := m.Requests()
	if len(reqs) != 2 {
		return nil, fmt.Errorf("reins sent %d requests, want 2", len(reqs))
	}
	return reqs, nil
}

// replayEndpoint measures the endpoint alone: a fresh mock-llm process
// answering reins's recorded requests, sent back to back by a plain Go
// HTTP client that reads every response to its end. Its wall time is the
// part of the two-step task no harness can avoid.
func replayEndpoint(ctx context.Context, c *config, w *workload, reqs []mock.Recorded) (measure.Result, string, error) {
	srv, err := startMock(ctx, c.reins, filepath.Join(c.scripts, w.script+".reins.yaml"))
	if err != nil {
		return measure.Result{}, "", err
	}
	defer srv.stop()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	var last []byte
	start := time.Now()
	base := strings.TrimSuffix(srv.url, "/v1")
	for _, rec := range reqs {
		// Sent to the path reins used: its wire (Chat Completions,
		// Responses, …) is the provider config's choice, not benchrun's.
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+rec.Path, bytes.NewReader(rec.Body))
		if err != nil {
			return measure.Result{}, "", err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		resp, err := client.Do(req)
		if err != nil {
			return measure.Result{}, err.Error(), nil
		}
		last, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return measure.Result{}, fmt.Sprintf("HTTP %d", resp.StatusCode), nil
		}
	}
	r := measure.Result{Wall: time.Since(start)}
	if !bytes.Contains(last, []byte(w.expect)) {
		return r, "unexpected replay answer", nil
	}
	return r, "", nil
}
