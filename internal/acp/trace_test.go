package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/harness"
)

// TestPromptContinuesMetaTrace: `reins acp` runs a session/prompt whose
// _meta carries a W3C traceparent (ACP's convention, what reins sends its
// own ACP children) under that span: the turn's run span has the client's
// trace id and span as parent.
func TestPromptContinuesMetaTrace(t *testing.T) {
	const (
		traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
		spanID  = "00f067aa0ba902b7"
	)
	type span struct{ TraceID, ParentSpanID, Name string }
	var (
		mu    sync.Mutex
		spans []span
	)
	hit := make(chan struct{}, 64)
	col := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { hit <- struct{}{} }()
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ResourceSpans []struct {
				ScopeSpans []struct{ Spans []span } `json:"scopeSpans"`
			} `json:"resourceSpans"`
		}
		json.Unmarshal(body, &req)
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
		mu.Unlock()
		w.Write([]byte("{}"))
	}))
	defer col.Close()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL}
	getenv := func(k string) string { return env[k] }
	base, err := harness.New(harness.Options{Home: t.TempDir(), Cwd: t.TempDir(), Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- Serve(context.Background(), Options{Base: base, Model: "mock/test", Version: "test"}, inR, outW)
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	send := func(id int, method string, params any) map[string]any {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := inW.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
		for lines.Scan() {
			var f map[string]any
			if json.Unmarshal(lines.Bytes(), &f) == nil {
				if v, ok := f["id"].(float64); ok && int(v) == id {
					if f["error"] != nil {
						t.Fatalf("%s: %v", method, f["error"])
					}
					r, _ := f["result"].(map[string]any)
					return r
				}
			}
		}
		t.Fatalf("%s: no answer", method)
		return nil
	}
	send(1, "initialize", map[string]any{"protocolVersion": 1})
	r := send(2, "session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
	sid, _ := r["sessionId"].(string)
	// The session's telemetry probe reached the collector: the exit will
	// wait for the flush (internal/telemetry).
	select {
	case <-hit:
	case <-time.After(time.Minute):
		t.Fatal("the collector got no probe")
	}
	send(3, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hi"}},
		"_meta": map[string]any{"traceparent": "00-" + traceID + "-" + spanID + "-01"}})
	inW.Close()
	go io.Copy(io.Discard, outR)
	select {
	case <-served:
	case <-time.After(time.Minute):
		t.Fatal("Serve did not return after stdin closed")
	}
	mu.Lock()
	defer mu.Unlock()
	found := 0
	for _, s := range spans {
		if s.Name != "turn" && s.ParentSpanID == spanID {
			if s.TraceID != traceID {
				t.Errorf("span %+v: another trace", s)
			}
			found++
		}
	}
	if found != 1 {
		t.Errorf("%d spans under the prompt's traceparent, want 1 (the run's); spans %+v", found, spans)
	}
}
