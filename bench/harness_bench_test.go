// Package bench holds the in-process benchmarks that need the whole
// harness: the two-step task through harness, session and adapter against
// an in-process mock endpoint, beside the same requests replayed by a plain
// HTTP client. Their difference is the harness's own time per task, at
// microsecond resolution and without process start (BENCHMARKS.md).
package bench

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
)

func TestMain(m *testing.M) {
	code := m.Run()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

const (
	twoStepPrompt = "[[two-step]] Read notes.txt and tell me what it says."
	twoStepAnswer = "The notes say hello."
)

// endpoint is the workload's mock server with the committed script.
func endpoint(tb testing.TB) (*httptest.Server, *mock.Server) {
	tb.Helper()
	sc, err := mock.Load(filepath.Join("scripts", "two-step.reins.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	m := mock.NewServer(sc)
	srv := httptest.NewServer(m)
	tb.Cleanup(srv.Close)
	return srv, m
}

// twoStep runs the task as `reins run` does: load config, resolve the
// model, open a session, run it, close it; it returns the output and the
// stop reason.
func twoStep(tb testing.TB, home, ws, url string) (string, string) {
	h, err := harness.New(harness.Options{Home: home, Cwd: ws, Getenv: func(string) string { return "" }})
	if err != nil {
		tb.Fatal(err)
	}
	defer h.Close()
	m, err := h.ResolveModel("openai/mock-model", url)
	if err != nil {
		tb.Fatal(err)
	}
	var fold outcome.Fold
	sess, err := h.NewSession(harness.SessionOptions{Model: m, Observe: func(_ session.Header, e session.Event) { fold.Push(e) }})
	if err != nil {
		tb.Fatal(err)
	}
	res := sess.Run(context.Background(), twoStepPrompt)
	if err := sess.Close(); err != nil {
		tb.Fatal(err)
	}
	var out strings.Builder
	for _, b := range fold.Collect() {
		out.WriteString(b.Text)
	}
	return out.String(), string(outcome.StopReasonOf(res.Reason))
}

func workspace(tb testing.TB) (home, ws string) {
	tb.Helper()
	home, ws = tb.TempDir(), tb.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("Hello from the notes. [[notes-content]]\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	return home, ws
}

// TestTwoStep keeps the benchmark honest: the task makes exactly the two
// requests the replay sends, and answers.
func TestTwoStep(t *testing.T) {
	srv, m := endpoint(t)
	home, ws := workspace(t)
	out, stop := twoStep(t, home, ws, srv.URL+"/v1")
	if out != twoStepAnswer || stop != string(outcome.StopCompleted) {
		t.Fatalf("output %q, stop %s", out, stop)
	}
	reqs := m.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[0].Last, "[[two-step]]") || !strings.Contains(reqs[1].Last, "[[notes-content]]") {
		t.Fatalf("requests = %+v", reqs)
	}
}

// BenchmarkTwoStep is the whole two-step task in process.
func BenchmarkTwoStep(b *testing.B) {
	srv, _ := endpoint(b)
	home, ws := workspace(b)
	b.ReportAllocs()
	for b.Loop() {
		if out, _ := twoStep(b, home, ws, srv.URL+"/v1"); out != twoStepAnswer {
			b.Fatalf("output %q", out)
		}
	}
}

// BenchmarkTwoStepEndpoint replays the task's two requests, recorded from
// a real run, with a plain HTTP client reading each response to its end:
// the endpoint's own latency, which no harness can avoid.
func BenchmarkTwoStepEndpoint(b *testing.B) {
	srv, m := endpoint(b)
	home, ws := workspace(b)
	twoStep(b, home, ws, srv.URL+"/v1")
	var bodies [][]byte
	for _, r := range m.Requests() {
		bodies = append(bodies, r.Body)
	}
	client := &http.Client{}
	b.ReportAllocs()
	for b.Loop() {
		var last []byte
		for _, body := range bodies {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "text/event-stream")
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			last, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				b.Fatal(err)
			}
		}
		if !bytes.Contains(last, []byte(twoStepAnswer)) {
			b.Fatalf("last response %q", last)
		}
	}
}
