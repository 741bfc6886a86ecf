package subagent

import (
	"context"

	"github.com/reinsdev/reins/internal/outcome"
)

// TraceContext is the W3C trace context (traceparent, tracestate) a child
// continues its parent's trace under: the span of its run in the parent.
// Every kind of child gets it its own way — an in-process child's loop
// directly, a reins or pi child as TRACEPARENT and TRACESTATE in its
// environment, an ACP child as _meta.traceparent, a Temporal child through
// the task it is sent (docs/telemetry.md). Empty when nothing is traced.
type TraceContext struct {
	Parent string `json:"traceparent,omitempty"`
	State  string `json:"tracestate,omitempty"`
}

// RunTracer sees each child run from its start to its settlement:
// internal/telemetry opens a span per run under the span ctx carries (the
// parent's subagent tool call). The manager only calls it, so it links no
// tracing library; nil traces nothing.
type RunTracer interface {
	// StartRun opens the run's span and returns the trace context the
	// child continues and the func that closes the span with the child's
	// session id and settled result.
	StartRun(ctx context.Context, req Request, placement string, background bool) (TraceContext, func(session string, r outcome.Result))
}

// traceRun opens req's span when the manager has a Tracer: req comes back
// with the trace context the child continues and the func that closes the
// span (Request.endTrace).
func (m *Manager) traceRun(ctx context.Context, req Request, background bool) Request {
	if m.Tracer == nil {
		return req
	}
	placement := "local"
	if m.Engine != nil {
		placement = "engine"
		if n, ok := m.Engine.(interface{ Name() string }); ok {
			placement = n.Name()
		}
	}
	req.Trace, req.traceEnd = m.Tracer.StartRun(ctx, req, placement, background)
	return req
}

// endTrace closes the run's span (a no-op when it has none).
func (r Request) endTrace(session string, res outcome.Result) {
	if r.traceEnd != nil {
		r.traceEnd(session, res)
	}
}

// TraceEnv is the agent file's env with the run's trace context as
// TRACEPARENT and TRACESTATE (the W3C convention a reins child, and any
// program using an OpenTelemetry env propagator, reads): what a child
// process is started with. Without a trace context it is env itself.
func (r Request) TraceEnv(env map[string]string) map[string]string {
	if r.Trace.Parent == "" {
		return env
	}
	out := make(map[string]string, len(env)+2)
	for k, v := range env {
		out[k] = v
	}
	out["TRACEPARENT"] = r.Trace.Parent
	out["TRACESTATE"] = r.Trace.State
	return out
}
