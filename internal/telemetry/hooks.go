package telemetry

import (
	"context"
	"encoding/json"
	"regexp"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/retry"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/tool"
)

// Session names the session an agent tracer traces.
type Session struct {
	ID    string
	Agent string // the agent definition's name ("": the built-in agent)
	Depth int
	// Parent is the trace context the session continues: a child's run
	// span in its parent (subagent.Request.Trace). Empty: the process's
	// own (TRACEPARENT at start), else a new trace.
	Parent subagent.TraceContext
}

// Agent is the tracer of one session's loop; a: the agent it traces (its
// model and provider are read at each request: /model switches them). It
// is nil when t is.
func (t *Telemetry) Agent(a *agent.Agent, s Session) agent.Tracer {
	if t == nil {
		return nil
	}
	return &agentTracer{t: t, a: a, s: s}
}

// Runs is the tracer of a session's child runs; nil when t is.
func (t *Telemetry) Runs() subagent.RunTracer {
	if t == nil {
		return nil
	}
	return runTracer{t}
}

// maxContent bounds one content attribute (telemetry.content: true).
const maxContent = 16 << 10

// parentOf is ctx when it carries a span, else ctx under tc (a child's
// parent), else under the process's own parent (TRACEPARENT).
func (t *Telemetry) parentOf(ctx context.Context, tc subagent.TraceContext) context.Context {
	if trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	if tc.Parent != "" {
		return Continue(ctx, tc.Parent, tc.State)
	}
	if sc := trace.SpanContextFromContext(t.parent); sc.IsValid() {
		return trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	return ctx
}

// text is s as a content attribute, cut to maxContent.
func text(k string, s string) attribute.KeyValue {
	if len(s) > maxContent {
		s = s[:maxContent]
	}
	return attribute.String(k, s)
}

func jsonText(k string, v any) attribute.KeyValue {
	b, _ := json.Marshal(v)
	return text(k, string(b))
}

type agentTracer struct {
	t *Telemetry
	a *agent.Agent
	s Session
}

func (at *agentTracer) agentName() string {
	if at.s.Agent == "" {
		return "reins"
	}
	return at.s.Agent
}

func (at *agentTracer) common() []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("gen_ai.agent.name", at.agentName()),
		attribute.String("gen_ai.conversation.id", at.s.ID),
		attribute.String("reins.session.id", at.s.ID),
		attribute.Int("reins.delegation.depth", at.s.Depth),
	}
}

func (at *agentTracer) Run(ctx context.Context) (context.Context, func(agent.TurnResult)) {
	ctx = at.t.parentOf(ctx, at.s.Parent)
	attrs := append(at.common(), attribute.String("gen_ai.operation.name", "invoke_agent"),
		attribute.String("gen_ai.provider.name", at.a.Provider), attribute.String("gen_ai.system", at.a.Provider),
		attribute.String("gen_ai.request.model", at.a.ModelName))
	ctx, span := at.t.tracer.Start(ctx, "invoke_agent "+at.agentName(), trace.WithAttributes(attrs...))
	return ctx, func(r agent.TurnResult) {
		span.SetAttributes(usageAttrs(r.Usage)...)
		endResult(span, r)
		span.End()
	}
}

// endResult records how a turn or run ended: its stop reason, and the
// failure code (never its message) as error.type.
func endResult(span trace.Span, r agent.TurnResult) {
	span.SetAttributes(attribute.String("reins.stop_reason", r.Reason))
	if r.By != "" {
		span.SetAttributes(attribute.String("reins.aborted_by", r.By))
	}
	if r.Failure != nil {
		span.SetAttributes(attribute.String("error.type", r.Failure.Code))
		span.SetStatus(codes.Error, r.Failure.Code)
	}
}

func usageAttrs(u llm.Usage) []attribute.KeyValue {
	out := []attribute.KeyValue{
		attribute.Int("gen_ai.usage.input_tokens", u.InputTokens),
		attribute.Int("gen_ai.usage.output_tokens", u.OutputTokens),
	}
	if u.CacheReadTokens > 0 {
		out = append(out, attribute.Int("gen_ai.usage.cache_read.input_tokens", u.CacheReadTokens))
	}
	if u.CacheWriteTokens > 0 {
		out = append(out, attribute.Int("gen_ai.usage.cache_creation.input_tokens", u.CacheWriteTokens))
	}
	if u.ReasoningTokens > 0 {
		out = append(out, attribute.Int("reins.usage.reasoning_tokens", u.ReasoningTokens))
	}
	if u.CostUSD != nil {
		out = append(out, attribute.Float64("reins.cost_usd", *u.CostUSD))
	}
	return out
}

func (at *agentTracer) Turn(ctx context.Context, n int) (context.Context, agent.TurnTrace) {
	ctx = at.t.parentOf(ctx, at.s.Parent)
	ctx, span := at.t.tracer.Start(ctx, "turn", trace.WithAttributes(append(at.common(), attribute.Int("reins.turn", n))...))
	return ctx, &turnTrace{at: at, span: span}
}

type turnTrace struct {
	at   *agentTracer
	span trace.Span
}

func (tt *turnTrace) TraceID() string { return tt.span.SpanContext().TraceID().String() }

func (tt *turnTrace) Request(ctx context.Context, step int, req *llm.Request) func(llm.Usage, llm.Finish, []llm.Block) {
	at := tt.at
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", at.a.Provider),
		attribute.String("gen_ai.system", at.a.Provider),
		attribute.String("gen_ai.request.model", req.Model),
		attribute.Int("reins.step", step),
		attribute.String("reins.session.id", at.s.ID),
	}
	if req.MaxTokens > 0 {
		attrs = append(attrs, attribute.Int("gen_ai.request.max_tokens", req.MaxTokens))
	}
	if at.t.content {
		attrs = append(attrs, text("gen_ai.system_instructions", req.System), jsonText("gen_ai.input.messages", req.Messages))
	}
	_, span := at.t.tracer.Start(ctx, "chat "+req.Model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return func(u llm.Usage, f llm.Finish, out []llm.Block) {
		span.SetAttributes(usageAttrs(u)...)
		span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{string(f.Kind)}))
		if f.Kind == llm.FinishError {
			span.SetAttributes(attribute.String("error.type", f.Code))
			span.SetStatus(codes.Error, f.Code)
		}
		if at.t.content {
			span.SetAttributes(jsonText("gen_ai.output.messages", out))
		}
		span.End()
	}
}

func (tt *turnTrace) Tool(ctx context.Context, c llm.Block) (context.Context, func(tool.Result)) {
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", c.Name),
		attribute.String("gen_ai.tool.call.id", c.ID),
		attribute.String("gen_ai.tool.type", "function"),
	}
	if tt.at.t.content {
		attrs = append(attrs, text("gen_ai.tool.call.arguments", string(c.Arguments)))
	}
	ctx, span := tt.at.t.tracer.Start(ctx, "execute_tool "+c.Name, trace.WithAttributes(attrs...))
	return ctx, func(r tool.Result) {
		if r.IsError {
			span.SetAttributes(attribute.String("error.type", "tool_error"))
			span.SetStatus(codes.Error, "tool_error")
		}
		if tt.at.t.content {
			span.SetAttributes(text("gen_ai.tool.call.result", r.Content))
		}
		span.End()
	}
}

func (tt *turnTrace) Retry(step int, a retry.Attempt) {
	tt.span.AddEvent("reins.retry", trace.WithAttributes(
		attribute.Int("reins.step", step), attribute.Int("reins.retry.attempt", a.N),
		attribute.Int("reins.retry.max", a.Max), attribute.Int64("reins.retry.delay_ms", a.Delay.Milliseconds()),
		attribute.String("error.type", a.Failure.Code)))
}

func (tt *turnTrace) Compacted(reason session.CompactReason, from, to int64, u llm.Usage) {
	tt.span.AddEvent("reins.compaction", trace.WithAttributes(
		attribute.String("reins.compaction.reason", string(reason)),
		attribute.Int64("reins.compaction.from_seq", from), attribute.Int64("reins.compaction.to_seq", to),
		attribute.Int("gen_ai.usage.input_tokens", u.InputTokens), attribute.Int("gen_ai.usage.output_tokens", u.OutputTokens)))
}

func (tt *turnTrace) End(r agent.TurnResult) {
	tt.span.SetAttributes(usageAttrs(r.Usage)...)
	endResult(tt.span, r)
	tt.span.End()
}

type runTracer struct{ t *Telemetry }

// category is the category of a fixed diagnostic line (docs/subagents.md);
// the line is built from known facts only, never child-written text.
var category = regexp.MustCompile(`category: ([a-z-]+)`)

func (rt runTracer) StartRun(ctx context.Context, req subagent.Request, placement string, background bool) (subagent.TraceContext, func(string, outcome.Result)) {
	ctx = rt.t.parentOf(ctx, subagent.TraceContext{})
	name, provider := "general", "inprocess"
	if req.Agent != nil {
		name = req.Agent.Name
		if req.Agent.Provider != "" {
			provider = req.Agent.Provider
		}
	}
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "invoke_agent"),
		attribute.String("gen_ai.agent.name", name),
		attribute.String("reins.subagent.provider", provider),
		attribute.String("reins.subagent.placement", placement),
		attribute.String("reins.subagent.run_id", req.RunID),
		attribute.String("reins.subagent.child_id", req.ChildID),
		attribute.Bool("reins.subagent.background", background),
		attribute.String("reins.session.id", req.ParentSession),
		attribute.Int("reins.delegation.depth", req.Depth),
	}
	if req.Continues != "" {
		attrs = append(attrs, attribute.String("reins.subagent.continues", req.Continues))
	}
	if rt.t.content {
		attrs = append(attrs, text("reins.subagent.prompt", req.Prompt))
	}
	ctx, span := rt.t.tracer.Start(ctx, "subagent "+name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return subagent.TraceContext{Parent: c["traceparent"], State: c["tracestate"]}, func(sess string, r outcome.Result) {
		span.SetAttributes(attribute.String("reins.subagent.stop_reason", string(r.StopReason)))
		if sess != "" {
			span.SetAttributes(attribute.String("reins.subagent.session", sess))
		}
		span.SetAttributes(usageAttrs(r.Usage)...)
		if m := category.FindStringSubmatch(r.Diagnostic); m != nil {
			span.SetAttributes(attribute.String("reins.subagent.category", m[1]))
		}
		if r.StopReason != outcome.StopCompleted {
			span.SetStatus(codes.Error, string(r.StopReason))
		}
		if rt.t.content {
			span.SetAttributes(jsonText("reins.subagent.output", r.Output))
		}
		span.End()
	}
}
