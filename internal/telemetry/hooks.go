package telemetry

import (
	"context"
	"encoding/json"
	"regexp"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/lazy"
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
	if spanContextFrom(ctx).IsValid() {
		return ctx
	}
	if tc.Parent != "" {
		return Continue(ctx, tc.Parent, tc.State)
	}
	if t.parent.IsValid() {
		return withSpanContext(ctx, t.parent)
	}
	return ctx
}

// text is s as a content attribute, cut to maxContent.
func text(k string, s string) KeyValue {
	if len(s) > maxContent {
		s = s[:maxContent]
	}
	return strAttr(k, s)
}

func jsonText(k string, v any) KeyValue {
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

func (at *agentTracer) common() []KeyValue {
	return []KeyValue{
		strAttr("gen_ai.agent.name", at.agentName()),
		strAttr("gen_ai.conversation.id", at.s.ID),
		strAttr("reins.session.id", at.s.ID),
		intAttr("reins.delegation.depth", at.s.Depth),
	}
}

func (at *agentTracer) Run(ctx context.Context) (context.Context, func(agent.TurnResult)) {
	ctx = at.t.parentOf(ctx, at.s.Parent)
	attrs := append(at.common(), strAttr("gen_ai.operation.name", "invoke_agent"),
		strAttr("gen_ai.provider.name", at.a.Provider), strAttr("gen_ai.system", at.a.Provider),
		strAttr("gen_ai.request.model", at.a.ModelName))
	ctx, span := at.t.start(ctx, "invoke_agent "+at.agentName(), KindInternal, attrs...)
	return ctx, func(r agent.TurnResult) {
		span.SetAttributes(usageAttrs(r.Usage)...)
		endResult(span, r)
		span.End()
	}
}

// endResult records how a turn or run ended: its stop reason, and the
// failure code (never its message) as error.type.
func endResult(span *span, r agent.TurnResult) {
	span.SetAttributes(strAttr("reins.stop_reason", string(r.Reason)))
	if r.By != "" {
		span.SetAttributes(strAttr("reins.aborted_by", r.By))
	}
	if r.Failure != nil {
		span.SetAttributes(strAttr("error.type", string(r.Failure.Code)))
		span.SetError(string(r.Failure.Code))
	}
}

func usageAttrs(u llm.Usage) []KeyValue {
	out := []KeyValue{
		intAttr("gen_ai.usage.input_tokens", u.InputTokens),
		intAttr("gen_ai.usage.output_tokens", u.OutputTokens),
	}
	if u.CacheReadTokens > 0 {
		out = append(out, intAttr("gen_ai.usage.cache_read.input_tokens", u.CacheReadTokens))
	}
	if u.CacheWriteTokens > 0 {
		out = append(out, intAttr("gen_ai.usage.cache_creation.input_tokens", u.CacheWriteTokens))
	}
	if u.ReasoningTokens > 0 {
		out = append(out, intAttr("reins.usage.reasoning_tokens", u.ReasoningTokens))
	}
	if u.CostUSD != nil {
		out = append(out, floatAttr("reins.cost_usd", *u.CostUSD))
	}
	return out
}

func (at *agentTracer) Turn(ctx context.Context, n int) (context.Context, agent.TurnTrace) {
	ctx = at.t.parentOf(ctx, at.s.Parent)
	ctx, span := at.t.start(ctx, "turn", KindInternal, append(at.common(), intAttr("reins.turn", n))...)
	return ctx, &turnTrace{at: at, span: span}
}

type turnTrace struct {
	at   *agentTracer
	span *span
}

func (tt *turnTrace) TraceID() string { return tt.span.SpanContext().TraceID.String() }

func (tt *turnTrace) Request(ctx context.Context, step int, req *llm.Request) func(llm.Usage, llm.Finish, []llm.Block) {
	at := tt.at
	attrs := []KeyValue{
		strAttr("gen_ai.operation.name", "chat"),
		strAttr("gen_ai.provider.name", at.a.Provider),
		strAttr("gen_ai.system", at.a.Provider),
		strAttr("gen_ai.request.model", req.Model),
		intAttr("reins.step", step),
		strAttr("reins.session.id", at.s.ID),
	}
	if req.MaxTokens > 0 {
		attrs = append(attrs, intAttr("gen_ai.request.max_tokens", req.MaxTokens))
	}
	if at.t.content {
		attrs = append(attrs, text("gen_ai.system_instructions", req.System), jsonText("gen_ai.input.messages", req.Messages))
	}
	_, span := at.t.start(ctx, "chat "+req.Model, KindClient, attrs...)
	return func(u llm.Usage, f llm.Finish, out []llm.Block) {
		span.SetAttributes(usageAttrs(u)...)
		span.SetAttributes(strsAttr("gen_ai.response.finish_reasons", []string{string(f.Kind)}))
		if f.Kind == llm.FinishError {
			span.SetAttributes(strAttr("error.type", string(f.Code)))
			span.SetError(string(f.Code))
		}
		if at.t.content {
			span.SetAttributes(jsonText("gen_ai.output.messages", out))
		}
		span.End()
	}
}

func (tt *turnTrace) Tool(ctx context.Context, c llm.Block) (context.Context, func(tool.Result)) {
	attrs := []KeyValue{
		strAttr("gen_ai.operation.name", "execute_tool"),
		strAttr("gen_ai.tool.name", c.Name),
		strAttr("gen_ai.tool.call.id", c.ID),
		strAttr("gen_ai.tool.type", "function"),
	}
	if tt.at.t.content {
		attrs = append(attrs, text("gen_ai.tool.call.arguments", string(c.Arguments)))
	}
	ctx, span := tt.at.t.start(ctx, "execute_tool "+c.Name, KindInternal, attrs...)
	return ctx, func(r tool.Result) {
		if r.IsError {
			span.SetAttributes(strAttr("error.type", "tool_error"))
			span.SetError("tool_error")
		}
		if tt.at.t.content {
			span.SetAttributes(text("gen_ai.tool.call.result", r.Content))
		}
		span.End()
	}
}

func (tt *turnTrace) Retry(step int, a retry.Attempt) {
	tt.span.AddEvent("reins.retry",
		intAttr("reins.step", step), intAttr("reins.retry.attempt", a.N),
		intAttr("reins.retry.max", a.Max), int64Attr("reins.retry.delay_ms", a.Delay.Milliseconds()),
		strAttr("error.type", string(a.Failure.Code)))
}

func (tt *turnTrace) Compacted(reason session.CompactReason, from, to int64, u llm.Usage) {
	tt.span.AddEvent("reins.compaction",
		strAttr("reins.compaction.reason", string(reason)),
		int64Attr("reins.compaction.from_seq", from), int64Attr("reins.compaction.to_seq", to),
		intAttr("gen_ai.usage.input_tokens", u.InputTokens), intAttr("gen_ai.usage.output_tokens", u.OutputTokens))
}

func (tt *turnTrace) End(r agent.TurnResult) {
	tt.span.SetAttributes(usageAttrs(r.Usage)...)
	endResult(tt.span, r)
	tt.span.End()
}

type runTracer struct{ t *Telemetry }

// category is the category of a fixed diagnostic line (docs/subagents.md);
// the line is built from known facts only, never child-written text.
var category = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`category: ([a-z-]+)`) }}

func (rt runTracer) StartRun(ctx context.Context, req subagent.Request, placement string, background bool) (subagent.TraceContext, func(string, outcome.Result)) {
	ctx = rt.t.parentOf(ctx, subagent.TraceContext{})
	name, provider := "general", "inprocess"
	if req.Agent != nil {
		name = req.Agent.Name
		if req.Agent.Provider != "" {
			provider = req.Agent.Provider
		}
	}
	attrs := []KeyValue{
		strAttr("gen_ai.operation.name", "invoke_agent"),
		strAttr("gen_ai.agent.name", name),
		strAttr("reins.subagent.provider", provider),
		strAttr("reins.subagent.placement", placement),
		strAttr("reins.subagent.run_id", req.RunID),
		strAttr("reins.subagent.child_id", req.ChildID),
		boolAttr("reins.subagent.background", background),
		strAttr("reins.session.id", req.ParentSession),
		intAttr("reins.delegation.depth", req.Depth),
	}
	if req.Continues != "" {
		attrs = append(attrs, strAttr("reins.subagent.continues", req.Continues))
	}
	if rt.t.content {
		attrs = append(attrs, text("reins.subagent.prompt", req.Prompt))
	}
	ctx, span := rt.t.start(ctx, "subagent "+name, KindClient, attrs...)
	return inject(ctx), func(sess string, r outcome.Result) {
		span.SetAttributes(strAttr("reins.subagent.stop_reason", string(r.StopReason)))
		if sess != "" {
			span.SetAttributes(strAttr("reins.subagent.session", sess))
		}
		span.SetAttributes(usageAttrs(r.Usage)...)
		if m := category.Get().FindStringSubmatch(r.Diagnostic); m != nil {
			span.SetAttributes(strAttr("reins.subagent.category", m[1]))
		}
		if r.StopReason != outcome.StopCompleted {
			span.SetError(string(r.StopReason))
		}
		if rt.t.content {
			span.SetAttributes(jsonText("reins.subagent.output", r.Output))
		}
		span.End()
	}
}
