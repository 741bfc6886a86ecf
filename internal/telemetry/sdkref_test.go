package telemetry

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	// The OTel SDK is the reference the recorder is checked against; it is
	// linked into this test only, never into reins (internal/importrules).
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// recorderOps are the operations the hooks use, on either recorder.
type recorderOps interface {
	start(ctx context.Context, name string, client bool, attrs ...KeyValue) context.Context
	set(ctx context.Context, attrs ...KeyValue)
	event(ctx context.Context, name string, attrs ...KeyValue)
	fail(ctx context.Context, desc string)
	end(ctx context.Context)
	traceparent(ctx context.Context) string
}

// drive runs one scenario: spans of every kind of attribute, a key set
// twice, events (more than the limit on one span), an error status, a
// child, a remote parent with tracestate and the random flag, and an
// unsampled remote parent with a child of its own. It returns what each
// traceparent handed on looks like (ids masked).
func drive(r recorderOps) []string {
	var handed []string
	mask := func(tp string) string {
		p := strings.Split(tp, "-")
		if len(p) != 4 {
			return tp
		}
		return p[0] + "-" + fmt.Sprint(len(p[1])) + "-" + fmt.Sprint(len(p[2])) + "-" + p[3]
	}
	bg := context.Background()
	a := r.start(bg, "a", true, strAttr("s", "x"), intAttr("n", 3), int64Attr("n64", -4), floatAttr("f", 0.25),
		boolAttr("b", true), strsAttr("ss", []string{"p", "q"}))
	r.set(a, strAttr("s", "y"), intAttr("late", 1))
	for i := range maxEvents + 3 {
		r.event(a, fmt.Sprintf("e%d", i), intAttr("i", i))
	}
	r.fail(a, "broke")
	b := r.start(a, "b", false)
	handed = append(handed, mask(r.traceparent(b)))
	r.end(b)
	r.end(a)
	for _, tp := range []string{
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03",
		"00-4bf92f3577b34da6a3ce929d0e0e4737-00f067aa0ba902b8-00",
	} {
		c := r.start(Continue(bg, tp, "k=v, t@s=w"), "under "+tp[:5]+tp[len(tp)-2:], false, strAttr("k", "v"))
		d := r.start(c, "child "+tp[len(tp)-2:], false)
		handed = append(handed, mask(r.traceparent(c)), mask(r.traceparent(d)))
		r.end(d)
		r.end(c)
	}
	return handed
}

// ours drives the recorder.
type ours struct {
	t     *Telemetry
	spans map[SpanID]*span
}

func (o *ours) start(ctx context.Context, name string, client bool, attrs ...KeyValue) context.Context {
	kind := KindInternal
	if client {
		kind = KindClient
	}
	ctx, s := o.t.start(ctx, name, kind, attrs...)
	o.spans[s.SpanContext().SpanID] = s
	return ctx
}
func (o *ours) sp(ctx context.Context) *span { return o.spans[spanContextFrom(ctx).SpanID] }
func (o *ours) set(ctx context.Context, attrs ...KeyValue) {
	o.sp(ctx).SetAttributes(attrs...)
}
func (o *ours) event(ctx context.Context, name string, attrs ...KeyValue) {
	o.sp(ctx).AddEvent(name, attrs...)
}
func (o *ours) fail(ctx context.Context, desc string)  { o.sp(ctx).SetError(desc) }
func (o *ours) end(ctx context.Context)                { o.sp(ctx).End() }
func (o *ours) traceparent(ctx context.Context) string { return inject(ctx).Parent }

// sdk drives the OTel SDK; Continue's context is read through the OTel
// propagator, so the SDK sees the parent as it always did.
type sdk struct{ tr trace.Tracer }

func otelAttrs(kvs []KeyValue) []attribute.KeyValue {
	var out []attribute.KeyValue
	for _, a := range kvs {
		switch a.Value.Kind {
		case KindString:
			out = append(out, attribute.String(a.Key, a.Value.Str))
		case KindBool:
			out = append(out, attribute.Bool(a.Key, a.Value.Bool))
		case KindInt64:
			out = append(out, attribute.Int64(a.Key, a.Value.Int))
		case KindFloat64:
			out = append(out, attribute.Float64(a.Key, a.Value.Float))
		case KindStringSlice:
			out = append(out, attribute.StringSlice(a.Key, a.Value.Strings))
		}
	}
	return out
}

func (s sdk) start(ctx context.Context, name string, client bool, attrs ...KeyValue) context.Context {
	if sc := spanContextFrom(ctx); sc.Remote && !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": sc.Traceparent(), "tracestate": sc.State})
	}
	kind := trace.SpanKindInternal
	if client {
		kind = trace.SpanKindClient
	}
	ctx, _ = s.tr.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(otelAttrs(attrs)...))
	return ctx
}
func (sdk) set(ctx context.Context, attrs ...KeyValue) {
	trace.SpanFromContext(ctx).SetAttributes(otelAttrs(attrs)...)
}
func (sdk) event(ctx context.Context, name string, attrs ...KeyValue) {
	trace.SpanFromContext(ctx).AddEvent(name, trace.WithAttributes(otelAttrs(attrs)...))
}
func (sdk) fail(ctx context.Context, desc string) {
	trace.SpanFromContext(ctx).SetStatus(codes.Error, desc)
}
func (sdk) end(ctx context.Context) { trace.SpanFromContext(ctx).End() }
func (sdk) traceparent(ctx context.Context) string {
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}

// TestRecorderLikeSDK: the same operations on the recorder and on the
// OTel SDK (which reins used before) give the same spans — names, kinds,
// attributes (order, types, values, a key set twice), events (the oldest
// dropped beyond the limit), status, parents, trace ids, tracestate,
// which spans are recorded at all — and hand on the same traceparents.
func TestRecorderLikeSDK(t *testing.T) {
	mem := &memExporter{}
	tel := Start(Options{Exporter: mem})
	<-tel.probed // answered: the exit flushes
	o := &ours{t: tel, spans: map[SpanID]*span{}}
	gotHanded := drive(o)
	tel.Shutdown(context.Background())

	ref := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(ref))
	wantHanded := drive(sdk{tp.Tracer("ref")})
	stubs := ref.GetSpans() // before Shutdown, which resets them
	_ = tp.Shutdown(context.Background())

	if !slices.Equal(gotHanded, wantHanded) {
		t.Errorf("handed on %v, SDK %v", gotHanded, wantHanded)
	}
	var got, want []string
	names := map[string]string{}
	for _, s := range mem.spans {
		names[s.Context.SpanID.String()] = s.Name
	}
	for _, s := range mem.spans {
		parent := names[s.Parent.String()]
		if parent == "" && s.Parent.IsValid() {
			parent = "remote " + s.Parent.String()
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s kind=%d parent=%s trace=%s state=%q status=%d/%q\n", s.Name, s.Kind, parent,
			remoteTrace(s.Context.TraceID.String()), s.Context.State, s.Status, s.StatusDescription)
		for _, a := range s.Attributes {
			fmt.Fprintf(&b, "  %s %d %s\n", a.Key, a.Value.Kind, a.Value.Emit())
		}
		for _, e := range s.Events {
			fmt.Fprintf(&b, "  event %s %v\n", e.Name, e.Attributes)
		}
		got = append(got, b.String())
	}
	refNames := map[string]string{}
	for _, s := range stubs {
		refNames[s.SpanContext.SpanID().String()] = s.Name
	}
	kinds := map[attribute.Type]ValueKind{attribute.STRING: KindString, attribute.BOOL: KindBool, attribute.INT64: KindInt64,
		attribute.FLOAT64: KindFloat64, attribute.STRINGSLICE: KindStringSlice}
	for _, s := range stubs {
		parent := refNames[s.Parent.SpanID().String()]
		if parent == "" && s.Parent.SpanID().IsValid() {
			parent = "remote " + s.Parent.SpanID().String()
		}
		status := 0
		if s.Status.Code == codes.Error {
			status = 2
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s kind=%d parent=%s trace=%s state=%q status=%d/%q\n", s.Name, s.SpanKind, parent,
			remoteTrace(s.SpanContext.TraceID().String()), s.SpanContext.TraceState().String(), status, s.Status.Description)
		for _, a := range s.Attributes {
			fmt.Fprintf(&b, "  %s %d %s\n", a.Key, kinds[a.Value.Type()], a.Value.Emit())
		}
		for _, e := range s.Events {
			var kv []KeyValue
			for _, a := range e.Attributes {
				kv = append(kv, intAttr(string(a.Key), int(a.Value.AsInt64())))
			}
			fmt.Fprintf(&b, "  event %s %v\n", e.Name, kv)
		}
		want = append(want, b.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("recorded\n%s\nSDK\n%s", strings.Join(got, ""), strings.Join(want, ""))
	}
	if len(got) != 4 {
		t.Errorf("%d spans recorded, want 4 (a, b, and the two under the sampled parent)", len(got))
	}
}

// remoteTrace names the scenario's remote trace ids and masks new ones.
func remoteTrace(id string) string {
	if strings.HasPrefix(id, "4bf92f3577b34da6a3ce929d0e0e473") {
		return id
	}
	return "new"
}
