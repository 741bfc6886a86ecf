package telemetry

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	// The OTel API is the reference the recorder is checked against; it is
	// linked into this test only, never into reins (internal/importrules).
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/reinsdev/reins/internal/subagent"
)

// TestTraceparentLikeOTel: ParseTraceparent and Traceparent read and
// write W3C trace context exactly as the OTel propagator does (which
// reins used before), for valid and malformed input alike.
func TestTraceparentLikeOTel(t *testing.T) {
	const tid, sid = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	for _, c := range []struct{ tp, ts string }{
		{"00-" + tid + "-" + sid + "-01", ""},
		{"00-" + tid + "-" + sid + "-00", "vendor=x"},
		{"00-" + tid + "-" + sid + "-03", "a=1, b@t=2 ,,c=3"},
		{"00-" + tid + "-" + sid + "-02", "A=1"},
		{"00-" + tid + "-" + sid + "-01", "a=1,a=2"},
		{"00-" + tid + "-" + sid + "-01", "a=1 "},
		{"00-" + tid + "-" + sid + "-01", "a=x y"},
		{"00-" + tid + "-" + sid + "-01", "1a=x"},
		{"00-" + tid + "-" + sid + "-01", "1a@b=x"},
		{"00-" + tid + "-" + sid + "-01", strings.Repeat("k=v,", 33)},
		{"00-" + tid + "-" + sid + "-01-extra", ""},
		{"01-" + tid + "-" + sid + "-01-extra", ""},
		{"01-" + tid + "-" + sid + "-09", ""},
		{"ff-" + tid + "-" + sid + "-01", ""},
		{"00-" + tid + "-" + sid + "-04", ""},
		{"00-" + strings.ToUpper(tid) + "-" + sid + "-01", ""},
		{"00-00000000000000000000000000000000-" + sid + "-01", ""},
		{"00-" + tid + "-0000000000000000-01", ""},
		{"00-" + tid + "-" + sid, ""},
		{"00-" + tid + "-" + sid + "-0g", ""},
		{"0-" + tid + "-" + sid + "-01", ""},
		{"garbage", "a=1"},
		{"", "a=1"},
	} {
		want := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(),
			propagation.MapCarrier{"traceparent": c.tp, "tracestate": c.ts}))
		got, ok := ParseTraceparent(c.tp, c.ts)
		if ok != want.IsValid() || got.TraceID != TraceID(want.TraceID()) || got.SpanID != SpanID(want.SpanID()) ||
			got.Flags != byte(want.TraceFlags()) || got.State != want.TraceState().String() || got.Remote != want.IsRemote() {
			t.Errorf("%q %q: got %+v %v, OTel %+v", c.tp, c.ts, got, ok, want)
			continue
		}
		out := propagation.MapCarrier{}
		propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), want), out)
		if tc := inject(Continue(context.Background(), c.tp, c.ts)); tc.Parent != out["traceparent"] || tc.State != out["tracestate"] {
			t.Errorf("%q %q: we pass on %+v, OTel %v", c.tp, c.ts, tc, out)
		}
	}
}

// collector keeps the bodies of the OTLP/HTTP requests it answers 200.
type collector struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.bodies = append(c.bodies, b)
	c.mu.Unlock()
	w.Write([]byte("{}"))
}

// spans are the spans of every request, decoded, with the resource and
// scope of the last.
func (c *collector) spans(t *testing.T) (spans []map[string]any, resource, scope string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.bodies {
		var req struct {
			ResourceSpans []struct {
				Resource   json.RawMessage
				ScopeSpans []struct {
					Scope json.RawMessage
					Spans []map[string]any
				}
			}
		}
		if err := json.Unmarshal(b, &req); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		for _, rs := range req.ResourceSpans {
			resource = string(rs.Resource)
			for _, ss := range rs.ScopeSpans {
				scope = string(ss.Scope)
				spans = append(spans, ss.Spans...)
			}
		}
	}
	return spans, resource, scope
}

// TestExportJSON: what reaches a collector is OTLP/JSON as the SDK-based
// exporter sent it — resource attributes sorted by key, the scope, ids in
// hex, the parent, the remote parent's tracestate, the kind, attributes of
// every kind used (a key set twice keeps its place and its last value),
// events, and an error status — and a child is handed the span's
// traceparent and tracestate.
func TestExportJSON(t *testing.T) {
	var col collector
	srv := httptest.NewServer(&col)
	defer srv.Close()
	const tid, psid = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	env := map[string]string{"TRACEPARENT": "00-" + tid + "-" + psid + "-01", "TRACESTATE": "v=1"}
	tel := Start(Options{Settings: Settings{URL: srv.URL + "/v1/traces", Service: "svc"}, Version: "v9", Getenv: func(k string) string { return env[k] }})
	select { // the collector has answered, so the exit flushes to it
	case <-tel.probed:
	case <-time.After(time.Minute):
		t.Fatal("the probe did not finish")
	}
	ctx, outer := tel.start(tel.parentOf(context.Background(), subagent.TraceContext{}), "outer", KindClient,
		strAttr("s", "a"), intAttr("n", 3), int64Attr("n64", -4), floatAttr("f", 0.5), boolAttr("b", true),
		strsAttr("ss", []string{"x", "y"}))
	outer.SetAttributes(strAttr("s", "b"), strAttr("late", "z"))
	outer.AddEvent("ev", intAttr("k", 1))
	outer.SetError("boom")
	_, inner := tel.start(ctx, "inner", KindInternal)
	handed := inject(ctx)
	inner.End()
	outer.End()
	tel.Shutdown(context.Background())

	spans, resource, scope := col.spans(t)
	if len(spans) != 2 {
		t.Fatalf("%d spans exported, want 2", len(spans))
	}
	if want := `{"attributes":[{"key":"process.pid","value":{"intValue":"`; !strings.HasPrefix(resource, want) ||
		!strings.HasSuffix(resource, `"}},{"key":"service.name","value":{"stringValue":"svc"}},{"key":"service.version","value":{"stringValue":"v9"}}]}`) {
		t.Errorf("resource %s", resource)
	}
	if scope != `{"name":"github.com/reinsdev/reins","version":"v9"}` {
		t.Errorf("scope %s", scope)
	}
	byName := map[string]map[string]any{}
	for _, s := range spans {
		byName[s["name"].(string)] = s
	}
	o, i := byName["outer"], byName["inner"]
	if o == nil || i == nil {
		t.Fatalf("spans %v", spans)
	}
	attrs, _ := json.Marshal(o["attributes"])
	if want := `[{"key":"s","value":{"stringValue":"b"}},{"key":"n","value":{"intValue":"3"}},{"key":"n64","value":{"intValue":"-4"}},{"key":"f","value":{"doubleValue":0.5}},{"key":"b","value":{"boolValue":true}},{"key":"ss","value":{"arrayValue":{"values":[{"stringValue":"x"},{"stringValue":"y"}]}}},{"key":"late","value":{"stringValue":"z"}}]`; string(attrs) != want {
		t.Errorf("attributes\n%s\nwant\n%s", attrs, want)
	}
	events, _ := json.Marshal(o["events"])
	if !strings.HasPrefix(string(events), `[{"attributes":[{"key":"k","value":{"intValue":"1"}}],"name":"ev","timeUnixNano":"`) {
		t.Errorf("events %s", events)
	}
	status, _ := json.Marshal(o["status"])
	if string(status) != `{"code":2,"message":"boom"}` || i["status"] != nil {
		t.Errorf("status %s / %v", status, i["status"])
	}
	if o["traceId"] != tid || o["parentSpanId"] != psid || o["traceState"] != "v=1" || o["kind"] != 3.0 {
		t.Errorf("outer %v", o)
	}
	if i["traceId"] != tid || i["parentSpanId"] != o["spanId"] || i["kind"] != 1.0 || i["attributes"] != nil {
		t.Errorf("inner %v", i)
	}
	if handed.Parent != "00-"+tid+"-"+o["spanId"].(string)+"-01" || handed.State != "v=1" {
		t.Errorf("a child is handed %+v", handed)
	}
	for _, s := range spans {
		start, end := s["startTimeUnixNano"].(string), s["endTimeUnixNano"].(string)
		if len(start) < 19 || len(end) < 19 || end < start {
			t.Errorf("times %s %s", start, end)
		}
	}
}

// TestUnsampledParent: under a parent whose sampled flag is off (the SDK's
// parent-based sampling) nothing is recorded, yet a child is handed a new
// span id of the same trace, still unsampled.
func TestUnsampledParent(t *testing.T) {
	mem := &memExporter{}
	tel := Start(Options{Exporter: mem})
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"
	ctx, sp := tel.start(Continue(context.Background(), tp, ""), "x", KindInternal, strAttr("a", "b"))
	handed := inject(ctx)
	sp.End()
	tel.Shutdown(context.Background())
	if ended, _, _ := tel.Stats(); ended != 0 || len(mem.spans) != 0 {
		t.Errorf("ended %d, exported %d; want none", ended, len(mem.spans))
	}
	if !strings.HasPrefix(handed.Parent, "00-4bf92f3577b34da6a3ce929d0e0e4736-") || !strings.HasSuffix(handed.Parent, "-00") || handed.Parent == tp {
		t.Errorf("handed %q", handed.Parent)
	}
}

// TestQueueBound: spans beyond MaxQueue are dropped, not waited for, while
// an export is held; they are counted ended, not exported.
func TestQueueBound(t *testing.T) {
	release := make(chan struct{})
	mem := &memExporter{hold: release}
	tel := Start(Options{Exporter: mem})
	for range MaxQueue*2 + maxExportBatch {
		_, sp := tel.start(context.Background(), "s", KindInternal)
		sp.End()
	}
	close(release)
	tel.Shutdown(context.Background())
	ended, exported, _ := tel.Stats()
	if ended != MaxQueue*2+maxExportBatch || exported >= ended || exported < MaxQueue {
		t.Errorf("ended %d, exported %d", ended, exported)
	}
}

// memExporter keeps spans; with hold, each export of spans waits for it
// to be closed.
type memExporter struct {
	hold  chan struct{}
	mu    sync.Mutex
	spans []*SpanData
}

func (m *memExporter) ExportSpans(ctx context.Context, spans []*SpanData) error {
	if m.hold != nil && len(spans) > 0 {
		select {
		case <-m.hold:
		case <-time.After(time.Minute):
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.spans = append(m.spans, spans...)
	return nil
}

func (*memExporter) Shutdown(context.Context) error { return nil }
