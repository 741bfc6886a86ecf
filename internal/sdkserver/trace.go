package sdkserver

import (
	"encoding/json"

	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/telemetry"
)

// metaTrace is the W3C trace context a session/prompt's params carry as
// _meta.traceparent and _meta.tracestate — the convention of ACP, which
// reins follows toward its own ACP children (docs/telemetry.md) — so a
// client that traces its own work has the turn join its trace. Without
// one (or with params that are not an object) it is empty, and the turn
// continues the process's TRACEPARENT or starts a trace of its own.
func metaTrace(params json.RawMessage) subagent.TraceContext {
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return subagent.TraceContext{}
	}
	return telemetry.FromMeta(p.Meta)
}
