package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// collectorFunc is an OTLP/HTTP collector that counts what reached it and
// answers with h.
func collectorFunc(h http.HandlerFunc) *httptest.Server { return httptest.NewServer(h) }

// started ends n spans on tel's tracer.
func endSpans(tel *Telemetry, n int) {
	for i := range n {
		_, sp := tel.start(context.Background(), fmt.Sprintf("span %d", i), KindInternal)
		sp.End()
	}
}

// logLines is a host log that keeps its lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// TestExitNotHeldByCollector: a collector that takes the request and
// never answers does not hold Shutdown, even with an hour's flush bound:
// Shutdown returns while the collector still holds the probe open (it lets
// go only after Shutdown returned), and the spans are counted dropped. On
// the old rule Shutdown waited out its whole bound.
func TestExitNotHeldByCollector(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	got := make(chan struct{}, 16)
	release := make(chan struct{})
	srv := collectorFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- struct{}{}
		<-release // holds the request whatever the client does
	})
	defer srv.Close()
	defer close(release)
	var log logLines
	tel := Start(Options{Settings: Settings{URL: srv.URL + "/v1/traces"}, Logf: log.logf, ShutdownTimeout: time.Hour})
	select {
	case <-got: // the probe is held open
	case <-time.After(time.Minute):
		t.Fatal("the probe never reached the collector")
	}
	endSpans(tel, 5)
	done := make(chan struct{})
	go func() { tel.Shutdown(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("Shutdown is held by a collector that never answers")
	}
	ended, exported, _ := tel.Stats()
	if ended != 5 || exported != 0 {
		t.Errorf("ended %d, exported %d; want 5, 0", ended, exported)
	}
	if want := "telemetry: 5 spans ended, 0 exported, 5 dropped (the collector had not answered by exit"; !strings.Contains(log.String(), want) {
		t.Errorf("host log %q, want %q", log.String(), want)
	}
	srv.CloseClientConnections()
}

// TestExitFlushesToAnsweringCollector: a collector that answered the probe
// gets every span at Shutdown; one that answered only 500 is not waited
// for, and its spans are counted dropped.
func TestExitFlushesToAnsweringCollector(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, status := range []int{http.StatusOK, http.StatusInternalServerError} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			srv := collectorFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(status)
				w.Write([]byte("{}"))
			})
			defer srv.Close()
			var log logLines
			tel := Start(Options{Settings: Settings{URL: srv.URL + "/v1/traces"}, Logf: log.logf})
			select {
			case <-tel.probed:
			case <-time.After(time.Minute):
				t.Fatal("the probe did not finish")
			}
			endSpans(tel, 3)
			tel.Shutdown(context.Background())
			ended, exported, _ := tel.Stats()
			want := int64(3)
			if status != http.StatusOK {
				want = 0
			}
			if ended != 3 || exported != want {
				t.Errorf("ended %d, exported %d; want 3, %d\n%s", ended, exported, want, log.String())
			}
		})
	}
}

// BenchmarkShutdown is what telemetry adds to an exit (BENCHMARKS.md,
// "Telemetry: a dead collector at exit"): Start, 12 spans (a two-step
// run's), Shutdown, against a collector that refuses connections, never
// answers, answers 500, or answers 200 — with the probe answered or not
// by the time the run ends, as it would be.
func BenchmarkShutdown(b *testing.B) {
	release := make(chan struct{})
	refused := httptest.NewServer(http.NotFoundHandler())
	refusedURL := refused.URL
	refused.Close()
	silent := collectorFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer silent.Close()
	defer close(release)
	failing := collectorFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	defer failing.Close()
	ok := collectorFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("{}")) })
	defer ok.Close()
	for _, c := range []struct{ name, url string }{
		{"refused", refusedURL}, {"never-answers", silent.URL}, {"500", failing.URL}, {"200", ok.URL},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				tel := Start(Options{Settings: Settings{URL: c.url + "/v1/traces"}})
				endSpans(tel, 12)
				tel.Shutdown(context.Background())
			}
		})
	}
}

// TestExitFlushBounded: a collector that answered the probe but then holds
// the final export gets ShutdownTimeout and no more: Shutdown returns, the
// export in flight is abandoned (nothing of telemetry outlives Shutdown:
// goleak), and the spans are counted dropped. The SDK's processor left
// that export running past Shutdown.
func TestExitFlushBounded(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	release := make(chan struct{})
	srv := collectorFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > int64(len(`{"resourceSpans":[]}`)) {
			select { // holds a real export until the client gives up
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Write([]byte("{}"))
	})
	defer srv.Close()
	defer close(release)
	var log logLines
	tel := Start(Options{Settings: Settings{URL: srv.URL + "/v1/traces"}, Logf: log.logf, ShutdownTimeout: 50 * time.Millisecond})
	select {
	case <-tel.probed:
	case <-time.After(time.Minute):
		t.Fatal("the probe did not finish")
	}
	if _, _, failed := tel.Stats(); !tel.exp.answered.Load() || failed != 0 {
		t.Fatal("the probe was not answered")
	}
	endSpans(tel, 3)
	done := make(chan struct{})
	go func() { tel.Shutdown(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("Shutdown is held by an export the collector never answers")
	}
	if ended, exported, _ := tel.Stats(); ended != 3 || exported != 0 {
		t.Errorf("ended %d, exported %d; want 3, 0", ended, exported)
	}
	for _, want := range []string{"telemetry: shutdown: context deadline exceeded", "telemetry: 3 spans ended, 0 exported, 3 dropped"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("host log %q, want %q", log.String(), want)
		}
	}
}
