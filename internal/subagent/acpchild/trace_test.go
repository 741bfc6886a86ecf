package acpchild

import (
	"context"
	"testing"

	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/subagent"
)

// TestTraceContextSent: an ACP child of a traced run gets the run's W3C
// trace context as _meta.traceparent and _meta.tracestate on session/new
// and session/prompt, and as TRACEPARENT in its environment (issue 33).
func TestTraceContextSent(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	f := newFixture(t)
	ag := f.agent("trace_meta", "", nil)
	p := f.provider()
	req := f.request(ag, "trace")
	req.Trace = subagent.TraceContext{Parent: tp, State: "reins=1"}
	r, err := p.Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	res := outcome.Settle(r.Wait(context.Background()))
	if err := r.Dispose(); err != nil {
		t.Error(err)
	}
	if res.StopReason != outcome.StopCompleted {
		t.Fatalf("%+v", res)
	}
	want := `{"new":{"traceparent":"` + tp + `","tracestate":"reins=1"},"prompt":{"traceparent":"` + tp + `","tracestate":"reins=1"},"env":"` + tp + `"}`
	if got := canonical(t, text(res)); got != canonical(t, want) {
		t.Errorf("the child got\n%s\nwant\n%s", got, canonical(t, want))
	}
}
