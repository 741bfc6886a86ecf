package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/reinsdev/reins/internal/sdkserver/sdkfake"
)

// otlpSpan is what the trace tests read of an OTLP/JSON span.
type otlpSpan struct {
	TraceID      string `json:"traceId"`
	SpanID       string `json:"spanId"`
	ParentSpanID string `json:"parentSpanId"`
	Name         string `json:"name"`
}

// collector is an OTLP/HTTP collector that keeps the spans it is sent
// (OTLP's JSON encoding, which reins sends).
type collector struct {
	mu    sync.Mutex
	spans []otlpSpan
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		ResourceSpans []struct {
			ScopeSpans []struct {
				Spans []otlpSpan `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &req) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			c.spans = append(c.spans, ss.Spans...)
		}
	}
	c.mu.Unlock()
	w.Write([]byte("{}"))
}

// checkTree checks that spans are one trace nested as the delegation tree
// of telemetryTreeScript: the parent's execute_tool spans hold a subagent
// span per child, and each child's own run span lies under its subagent
// span — for the reins child, across the process boundary.
func checkTree(t *testing.T, spans []otlpSpan) {
	t.Helper()
	byID := map[string]otlpSpan{}
	traces := map[string]bool{}
	for _, s := range spans {
		byID[s.SpanID] = s
		traces[s.TraceID] = true
	}
	if len(traces) != 1 {
		t.Errorf("%d traces, want 1", len(traces))
	}
	edges := map[string]int{}
	for _, s := range spans {
		edges[byID[s.ParentSpanID].Name+" > "+s.Name]++
	}
	for _, want := range []string{
		" > invoke_agent reins",
		"execute_tool subagent > subagent general",
		"execute_tool subagent > subagent helper",
		"subagent general > invoke_agent general",
		"subagent helper > invoke_agent reins", // the reins child's run, in the child process
		"turn > chat test",
	} {
		if edges[want] == 0 {
			t.Errorf("no span edge %q", want)
		}
	}
	if t.Failed() {
		t.Logf("edges: %v", edges)
	}
}

const telemetryTreeScript = `
replies:
  - match: delegate-now
    toolCalls:
      - {id: p1, name: subagent, arguments: {description: in process, prompt: "INPROC-TASK"}}
      - {id: p2, name: subagent, arguments: {description: reins child, agent: helper, prompt: "CHILD-TASK"}}
  - match: INPROC-TASK
    text: inproc done
  - match: CHILD-TASK
    text: child done
fallback:
  text: parent done
`

// TestTraceAcrossReinsChild: `reins run` traced to a collector through
// OTEL_EXPORTER_OTLP_ENDPOINT, with an in-process and a reins child: every
// span of both processes is one trace, nested as the delegation tree (the
// reins child continues it from TRACEPARENT).
func TestTraceAcrossReinsChild(t *testing.T) {
	col := &collector{}
	srv := httptest.NewServer(col)
	defer srv.Close()
	url, _ := startMock(t, telemetryTreeScript)
	mark := sdkfake.NewMark(t.Name())
	cwd, home := sdkWorkspace(t, mark, map[string]string{"helper": "---\nname: helper\ndescription: a reins child\nprovider: reins\n---\nYou help.\n"})
	cmd := reinsIn(t, cwd, home, mark, "run", "--json", "-m", "openai/test", "--base-url", url, "delegate-now")
	cmd.Env = append(cmd.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+srv.URL, "TRACEPARENT=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reins run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(string(out), `"stopReason":"completed"`) {
		t.Fatalf("result %s", out)
	}
	col.mu.Lock()
	spans := append([]otlpSpan(nil), col.spans...)
	col.mu.Unlock()
	checkTree(t, spans)
	if t.Failed() {
		b, _ := os.ReadFile(home + "/logs/reins.log")
		t.Logf("host log:\n%s", b)
	}
	checkNoLeftovers(t, mark)
}
