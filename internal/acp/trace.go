package acp

import (
	"context"

	"github.com/reinsdev/reins/internal/telemetry"
)

// continueTrace is ctx under the W3C trace context a session/prompt's
// _meta carries (traceparent, tracestate — what reins itself sends its ACP
// children, docs/telemetry.md), so the turn's spans join the editor's or
// parent's trace. Without one ctx is unchanged: the turn continues the
// process's TRACEPARENT or starts a trace of its own.
func continueTrace(ctx context.Context, meta map[string]any) context.Context {
	tc := telemetry.FromMeta(meta)
	return telemetry.Continue(ctx, tc.Parent, tc.State)
}
