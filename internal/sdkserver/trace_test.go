package sdkserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/sdkserver"
	"github.com/reinsdev/reins/sdk"
)

// TestPromptContinuesMetaTrace: a session/prompt whose _meta carries a W3C
// traceparent (the ACP convention) runs its turn in that trace — the
// turn's run span lies under the client's span — even when the process
// was started with another TRACEPARENT; a prompt without one continues
// the process's.
func TestPromptContinuesMetaTrace(t *testing.T) {
	const (
		envTrace  = "11111111111111111111111111111111"
		metaTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
		metaSpan  = "00f067aa0ba902b7"
	)
	type span struct{ TraceID, SpanID, ParentSpanID, Name string }
	var (
		mu    sync.Mutex
		spans []span
	)
	probed := make(chan struct{}, 64)
	col := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { probed <- struct{}{} }()
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
	url, _ := mockServer(t, "replies:\n  - {text: fine, repeat: true}\n")
	cwd, home := workspace(t)
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL,
		"TRACEPARENT":                 "00-" + envTrace + "-2222222222222222-01",
	}
	c := serve(t, sdkserver.Config{Home: home, Cwd: cwd, Model: "openai/test", BaseURL: url, Getenv: func(k string) string { return env[k] }})
	c.initialize()
	// Telemetry's start-up probe has been answered: the exit will wait
	// for the flush (internal/telemetry).
	select {
	case <-probed:
	case <-time.After(time.Minute):
		t.Fatal("the collector got no probe")
	}
	for _, meta := range []map[string]any{{"traceparent": "00-" + metaTrace + "-" + metaSpan + "-01"}, nil} {
		p := map[string]any{"content": []sdk.Block{{Type: "text", Text: "hi"}}}
		if meta != nil {
			p["_meta"] = meta
		}
		id := c.request(sdk.MethodSessionPrompt, p)
		f := last(c.until(isResponse(id)))
		r, _ := f["result"].(map[string]any)
		msg, _ := r["messageId"].(string)
		c.until(isIdle(msg))
	}
	id := c.request(sdk.MethodShutdown, struct{}{})
	c.until(isResponse(id))
	// The runtime shuts down (and flushes) after its answer: wait for the
	// runs' spans, bounded.
	runs := func() (n int) {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range spans {
			if s.Name == "invoke_agent reins" {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(time.Minute); runs() < 2 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	var underMeta, underEnv int
	for _, s := range spans {
		if s.Name != "invoke_agent reins" {
			continue
		}
		switch {
		case s.TraceID == metaTrace && s.ParentSpanID == metaSpan:
			underMeta++
		case s.TraceID == envTrace && s.ParentSpanID == "2222222222222222":
			underEnv++
		default:
			t.Errorf("run span %+v under neither the prompt's _meta nor TRACEPARENT", s)
		}
	}
	if underMeta != 1 || underEnv != 1 {
		t.Errorf("run spans under _meta.traceparent %d, under TRACEPARENT %d; want 1 and 1 (%d spans)", underMeta, underEnv, len(spans))
	}
}
