package agent

import (
	"context"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/retry"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tool"
)

// Tracer sees what a session does — its runs, turns, model requests, tool
// calls, retries and compactions — as it happens. internal/telemetry
// implements it as OpenTelemetry spans; the loop only calls it, so it
// links no tracing library, and a nil Tracer traces nothing. The contexts
// it returns carry the open span down to the tools, which is how a
// subagent tool's child joins the trace.
type Tracer interface {
	// Run opens the span of one run of the session (subagent.RunUntilIdle:
	// a prompt's turn and the notice-only turns after it).
	Run(ctx context.Context) (context.Context, func(TurnResult))
	// Turn opens the span of one turn.
	Turn(ctx context.Context, turn int) (context.Context, TurnTrace)
}

// TurnTrace is one open turn span.
type TurnTrace interface {
	// TraceID is the turn's trace id (32 hex digits), recorded on
	// turn/start so `reins log` and `reins view` can name the trace.
	TraceID() string
	// Request opens the span of one model request (one attempt; a retry
	// is another request); the returned func closes it with the usage,
	// finish and content the request ended with.
	Request(ctx context.Context, step int, req *llm.Request) func(llm.Usage, llm.Finish, []llm.Block)
	// Tool opens the span of one tool call; the func closes it.
	Tool(ctx context.Context, call llm.Block) (context.Context, func(tool.Result))
	// Retry records a retry about to wait (an event on the turn).
	Retry(step int, a retry.Attempt)
	// Compacted records a compaction of the history (an event on the turn).
	Compacted(reason session.CompactReason, fromSeq, toSeq int64, usage llm.Usage)
	// End closes the turn's span.
	End(TurnResult)
}

// TraceRun opens the span of one run when the agent has a Tracer; the
// func closes it (a no-op without one).
func (a *Agent) TraceRun(ctx context.Context) (context.Context, func(TurnResult)) {
	if a.Trace == nil {
		return ctx, func(TurnResult) {}
	}
	return a.Trace.Run(ctx)
}

// startTrace opens the turn's span (noTrace without a Tracer) and
// returns the context the turn runs in.
func (t *turn) startTrace(ctx context.Context) context.Context {
	t.tr = noTrace{}
	if t.a.Trace != nil {
		ctx, t.tr = t.a.Trace.Turn(ctx, t.n)
	}
	return ctx
}

// trace is the turn's span, noTrace for a turn that opened none (a
// CloseTurn or Compact turn).
func (t *turn) trace() TurnTrace {
	if t.tr == nil {
		return noTrace{}
	}
	return t.tr
}

type noTrace struct{}

func (noTrace) TraceID() string { return "" }
func (noTrace) Request(context.Context, int, *llm.Request) func(llm.Usage, llm.Finish, []llm.Block) {
	return func(llm.Usage, llm.Finish, []llm.Block) {}
}
func (noTrace) Tool(ctx context.Context, _ llm.Block) (context.Context, func(tool.Result)) {
	return ctx, func(tool.Result) {}
}
func (noTrace) Retry(int, retry.Attempt)                                 {}
func (noTrace) Compacted(session.CompactReason, int64, int64, llm.Usage) {}
func (noTrace) End(TurnResult)                                           {}
