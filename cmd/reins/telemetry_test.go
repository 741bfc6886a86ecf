package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

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

// jaegerPath is the Jaeger v2 all-in-one scripts/test builds once
// (tools/jaeger): $REINS_TEST_JAEGER, else the cache outside the
// repository.
func jaegerPath(t *testing.T) string {
	t.Helper()
	if os.Getenv("REINS_TEST_SKIP_JAEGER") == "1" || os.Getenv("REINS_TEST_SKIP_PEERS") == "1" {
		t.Skip("REINS_TEST_SKIP_JAEGER=1 or REINS_TEST_SKIP_PEERS=1: the Jaeger test is skipped")
	}
	p := os.Getenv("REINS_TEST_JAEGER")
	if p == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		p = filepath.Join(cache, "reins-test", "jaeger-v1.76.0", "jaeger")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the Jaeger all-in-one is missing (%v): run scripts/test, which builds it once (or set REINS_TEST_SKIP_JAEGER=1)", err)
	}
	return p
}

// TestJaegerTraceOfTheTree is acceptance 1 of issue 33 against a real
// Jaeger v2 all-in-one bound to 127.0.0.1: a traced `reins run` with an
// in-process and a reins child; the trace read back from Jaeger's query
// API is one trace nested as the delegation tree.
func TestJaegerTraceOfTheTree(t *testing.T) {
	bin := jaegerPath(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	j := exec.CommandContext(ctx, bin)
	j.Env = append(os.Environ(), "JAEGER_LISTEN_HOST=127.0.0.1")
	var jlog bytes.Buffer
	j.Stdout, j.Stderr = &jlog, &jlog
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		j.Wait()
	}()
	// Ready when its query API answers (bounded; a slow machine gets a
	// minute).
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get("http://127.0.0.1:16686/api/services")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("jaeger did not come up:\n%s", jlog.String())
		}
		time.Sleep(200 * time.Millisecond)
	}

	url, _ := startMock(t, telemetryTreeScript)
	mark := sdkfake.NewMark(t.Name())
	cwd, home := sdkWorkspace(t, mark, map[string]string{"helper": "---\nname: helper\ndescription: a reins child\nprovider: reins\n---\nYou help.\n"})
	cmd := reinsIn(t, cwd, home, mark, "run", "--json", "-m", "openai/test", "--base-url", url, "delegate-now")
	cmd.Env = append(cmd.Env, "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", "TRACEPARENT=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reins run: %v\n%s", err, stderr.String())
	}
	var res runResult
	if err := json.Unmarshal(out, &res); err != nil || res.StopReason != "completed" {
		t.Fatalf("result %s: %v", out, err)
	}
	// The trace id, as `reins log` prints it: on the parent's turn/start.
	b, _ := os.ReadFile(filepath.Join(home, "sessions", res.SessionID, "session.jsonl"))
	m := regexp.MustCompile(`"traceId":"([0-9a-f]{32})"`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no traceId on the parent's turn/start:\n%s", b)
	}
	traceID := string(m[1])

	// Jaeger batches what it receives: poll its API until every span of
	// the tree is there (bounded).
	var spans []otlpSpan
	deadline = time.Now().Add(time.Minute)
	for {
		spans = jaegerSpans(t, traceID)
		if len(spans) >= 14 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("trace %s: %d spans from Jaeger", traceID, len(spans))
	checkTree(t, spans)
	checkNoLeftovers(t, mark)
}

// jaegerSpans reads one trace from Jaeger's query API as otlpSpans (a
// span's parent is its CHILD_OF reference).
func jaegerSpans(t *testing.T, traceID string) []otlpSpan {
	resp, err := http.Get("http://127.0.0.1:16686/api/traces/" + traceID)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var body struct {
		Data []struct {
			Spans []struct {
				TraceID       string `json:"traceID"`
				SpanID        string `json:"spanID"`
				OperationName string `json:"operationName"`
				References    []struct {
					RefType string `json:"refType"`
					SpanID  string `json:"spanID"`
				} `json:"references"`
			} `json:"spans"`
		} `json:"data"`
	}
	if json.NewDecoder(resp.Body).Decode(&body) != nil {
		return nil
	}
	var out []otlpSpan
	for _, d := range body.Data {
		for _, s := range d.Spans {
			o := otlpSpan{TraceID: s.TraceID, SpanID: s.SpanID, Name: s.OperationName}
			for _, r := range s.References {
				if r.RefType == "CHILD_OF" {
					o.ParentSpanID = r.SpanID
				}
			}
			out = append(out, o)
		}
	}
	return out
}
