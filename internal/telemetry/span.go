package telemetry

// A span recorder of reins's own, in place of the OpenTelemetry SDK.
//
// Why: linking the OTel API and SDK cost every reins process — `reins
// version`, every `reins sdk` child, traced or not — about 1 MiB of RSS
// and some twenty package initialisers at start-up (BENCHMARKS.md, "What
// each library costs at start-up"; issue 27), for the few things reins
// uses: spans with ids, parents, attributes, events and an error status,
// W3C trace context in and out, and a bounded batch export (batch.go) over
// the OTLP/JSON encoder (otlpjson.go). What the SDK did is kept as it was:
// parent-based sampling (a remote parent's sampled flag decides; a new
// trace is sampled), a new span id for every span, recording or not, the
// parent's trace flags and tracestate inherited, attributes deduplicated
// by key (the last value wins, at the first one's place), at most
// maxEvents events (the oldest dropped). The SDK stays the reference,
// in tests only: sdkref_test.go drives both through the same operations
// and span_test.go checks trace context against its propagator.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/subagent"
)

// TraceID and SpanID are W3C trace context ids; zero is invalid.
type (
	TraceID [16]byte
	SpanID  [8]byte
)

func (t TraceID) String() string { return hex.EncodeToString(t[:]) }
func (s SpanID) String() string  { return hex.EncodeToString(s[:]) }

// IsValid: not all zero.
func (t TraceID) IsValid() bool { return t != TraceID{} }

// IsValid: not all zero.
func (s SpanID) IsValid() bool { return s != SpanID{} }

// Trace flags kept from a traceparent (W3C: sampled and random).
const (
	flagSampled = 0x01
	flagRandom  = 0x02
)

// SpanContext is what a span passes on: its ids, trace flags and the
// trace's tracestate (kept as its canonical text).
type SpanContext struct {
	TraceID TraceID
	SpanID  SpanID
	Flags   byte
	State   string
	// Remote: it came from a traceparent, not from a span of this process.
	Remote bool
}

// IsValid: both ids set.
func (sc SpanContext) IsValid() bool { return sc.TraceID.IsValid() && sc.SpanID.IsValid() }

// Sampled is the traceparent's sampled flag.
func (sc SpanContext) Sampled() bool { return sc.Flags&flagSampled != 0 }

// Traceparent is sc as a W3C traceparent (version 00), "" when invalid.
func (sc SpanContext) Traceparent() string {
	if !sc.IsValid() {
		return ""
	}
	return "00-" + sc.TraceID.String() + "-" + sc.SpanID.String() + "-" + hex.EncodeToString([]byte{sc.Flags & (flagSampled | flagRandom)})
}

// ParseTraceparent reads a W3C traceparent and tracestate the way the
// OTel propagator does: lower-case hex only; version ff refused; version
// 00 with no further fields and no reserved flag bits; only the sampled
// and random flags kept; a malformed tracestate dropped without affecting
// the traceparent (W3C). ok is false when traceparent is not valid.
func ParseTraceparent(traceparent, tracestate string) (sc SpanContext, ok bool) {
	h := traceparent
	if h == "" {
		return SpanContext{}, false
	}
	var ver, flags [1]byte
	if !hexPart(ver[:], &h) || ver[0] == 0xff {
		return SpanContext{}, false
	}
	if !hexPart(sc.TraceID[:], &h) || !hexPart(sc.SpanID[:], &h) || !hexPart(flags[:], &h) {
		return SpanContext{}, false
	}
	if ver[0] == 0 && (h != "" || flags[0] > 3) {
		return SpanContext{}, false
	}
	sc.Flags = flags[0] & (flagSampled | flagRandom)
	sc.State = parseTracestate(tracestate)
	sc.Remote = true
	if !sc.IsValid() {
		return SpanContext{}, false
	}
	return sc, true
}

// hexPart decodes the next "-"-separated field of *h into dst: exactly
// 2·len(dst) lower-case hex digits.
func hexPart(dst []byte, h *string) bool {
	part, rest, _ := strings.Cut(*h, "-")
	*h = rest
	if len(part) != 2*len(dst) {
		return false
	}
	for i := 0; i < len(part); i++ {
		if c := part[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	_, err := hex.Decode(dst, []byte(part))
	return err == nil
}

// maxTracestateMembers is W3C's bound on tracestate list members.
const maxTracestateMembers = 32

// parseTracestate is a W3C tracestate in canonical form (members joined by
// ",", empty members and surrounding blanks dropped), or "" when it is
// malformed: a bad key or value, a duplicate key, more than 32 members.
func parseTracestate(ts string) string {
	var out []string
	seen := map[string]bool{}
	for ts != "" {
		var m string
		m, ts, _ = strings.Cut(ts, ",")
		if m == "" {
			continue
		}
		k, v, ok := strings.Cut(m, "=")
		if !ok {
			return ""
		}
		k, v = strings.TrimLeft(k, " \t"), strings.TrimRight(v, " \t")
		if !tracestateKey(k) || !tracestateValue(v) || seen[k] {
			return ""
		}
		seen[k] = true
		if out = append(out, k+"="+v); len(out) > maxTracestateMembers {
			return ""
		}
	}
	return strings.Join(out, ",")
}

// tracestateKey: lcalpha 0*255(lcalpha / DIGIT / "_" / "-" / "*" / "/"),
// or tenant@system (tenant: 1–241, starting with lcalpha or DIGIT;
// system: 1–14, starting with lcalpha).
func tracestateKey(k string) bool {
	part := func(s string, first func(byte) bool, max int) bool {
		if s == "" || len(s)-1 > max || !first(s[0]) {
			return false
		}
		for i := 1; i < len(s); i++ {
			c := s[i]
			if !lcalnum(c) && c != '_' && c != '-' && c != '*' && c != '/' {
				return false
			}
		}
		return true
	}
	lcalpha := func(c byte) bool { return c >= 'a' && c <= 'z' }
	tenant, system, ok := strings.Cut(k, "@")
	if !ok {
		return part(k, lcalpha, 255)
	}
	return part(tenant, lcalnum, 240) && part(system, lcalpha, 13)
}

func lcalnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// tracestateValue: 1–256 printable ASCII but "," and "=", not ending in
// a space.
func tracestateValue(v string) bool {
	if v == "" || len(v) > 256 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x20 || c > 0x7e || c == ',' || c == '=' || (i == len(v)-1 && c == ' ') {
			return false
		}
	}
	return true
}

// FromMeta is the W3C trace context an ACP or SDK-protocol request carries
// in _meta (traceparent, tracestate: the convention reins follows toward
// its own ACP children, docs/telemetry.md); empty without one. It is the
// one reader of _meta's trace context (sdkserver, acp).
func FromMeta(meta map[string]any) subagent.TraceContext {
	tp, _ := meta["traceparent"].(string)
	ts, _ := meta["tracestate"].(string)
	return subagent.TraceContext{Parent: tp, State: ts}
}

type spanKey struct{}

// spanContextFrom is the span context ctx carries (a span of this process
// or a remote parent), zero when none.
func spanContextFrom(ctx context.Context) SpanContext {
	sc, _ := ctx.Value(spanKey{}).(SpanContext)
	return sc
}

func withSpanContext(ctx context.Context, sc SpanContext) context.Context {
	return context.WithValue(ctx, spanKey{}, sc)
}

// Continue returns ctx under the remote span a W3C traceparent names (ctx
// itself when traceparent is empty or malformed).
func Continue(ctx context.Context, traceparent, tracestate string) context.Context {
	sc, ok := ParseTraceparent(traceparent, tracestate)
	if !ok {
		return ctx
	}
	return withSpanContext(ctx, sc)
}

// inject is the trace context of ctx's span as a child is given it.
func inject(ctx context.Context) subagent.TraceContext {
	sc := spanContextFrom(ctx)
	if !sc.IsValid() {
		return subagent.TraceContext{}
	}
	return subagent.TraceContext{Parent: sc.Traceparent(), State: sc.State}
}

// newTraceID and newSpanID are random ids from crypto/rand (never zero).
func newTraceID() (t TraceID) {
	for !t.IsValid() {
		rand.Read(t[:])
	}
	return t
}

func newSpanID() (s SpanID) {
	for !s.IsValid() {
		rand.Read(s[:])
	}
	return s
}

// SpanKind is OTLP's span kind (the same numbers as the SDK's).
type SpanKind int

const (
	KindInternal SpanKind = 1
	KindClient   SpanKind = 3
)

// StatusCode is a span's status; its numbers are OTLP's (0 unset, 1 ok,
// 2 error).
type StatusCode int

const (
	CodeUnset StatusCode = 0
	CodeError StatusCode = 2
)

// ValueKind is the type of an attribute's value.
type ValueKind int

const (
	KindString ValueKind = iota + 1
	KindBool
	KindInt64
	KindFloat64
	KindStringSlice
)

// Value is an attribute's value.
type Value struct {
	Kind    ValueKind
	Str     string
	Int     int64
	Float   float64
	Bool    bool
	Strings []string
}

// Emit is v as text (the OTel attribute's Emit: slices as JSON).
func (v Value) Emit() string {
	switch v.Kind {
	case KindBool:
		return strconv.FormatBool(v.Bool)
	case KindInt64:
		return strconv.FormatInt(v.Int, 10)
	case KindFloat64:
		return strconv.FormatFloat(v.Float, 'g', -1, 64)
	case KindStringSlice:
		b, _ := json.Marshal(v.Strings)
		return string(b)
	}
	return v.Str
}

// KeyValue is an attribute.
type KeyValue struct {
	Key   string
	Value Value
}

func strAttr(k, v string) KeyValue { return KeyValue{k, Value{Kind: KindString, Str: v}} }
func intAttr(k string, v int) KeyValue {
	return KeyValue{k, Value{Kind: KindInt64, Int: int64(v)}}
}
func int64Attr(k string, v int64) KeyValue { return KeyValue{k, Value{Kind: KindInt64, Int: v}} }
func floatAttr(k string, v float64) KeyValue {
	return KeyValue{k, Value{Kind: KindFloat64, Float: v}}
}
func boolAttr(k string, v bool) KeyValue { return KeyValue{k, Value{Kind: KindBool, Bool: v}} }
func strsAttr(k string, v []string) KeyValue {
	return KeyValue{k, Value{Kind: KindStringSlice, Strings: v}}
}

// Event is a timed annotation of a span.
type Event struct {
	Name       string
	Time       time.Time
	Attributes []KeyValue
}

// Scope is the instrumentation scope (the tracer's name and version).
type Scope struct{ Name, Version string }

// Resource is what every span of a process shares (service.name, …).
type Resource struct{ Attributes []KeyValue }

// SpanData is an ended span, as it is exported.
type SpanData struct {
	Name       string
	Context    SpanContext
	Parent     SpanID // zero: a root span
	Kind       SpanKind
	Start, End time.Time
	Attributes []KeyValue
	Events     []Event
	Status     StatusCode
	// StatusDescription says why, with StatusError.
	StatusDescription string
	Resource          *Resource
	Scope             Scope
}

// maxEvents bounds a span's events (the SDK's default limit): beyond it
// the oldest are dropped.
const maxEvents = 128

// span is a span being recorded. A span whose trace is not sampled
// records nothing but still passes its context on.
type span struct {
	t         *Telemetry
	recording bool
	mu        sync.Mutex
	ended     bool
	d         SpanData
}

// start begins a span under ctx's span (or remote parent) and returns ctx
// under the new one.
func (t *Telemetry) start(ctx context.Context, name string, kind SpanKind, attrs ...KeyValue) (context.Context, *span) {
	p := spanContextFrom(ctx)
	sc := SpanContext{SpanID: newSpanID()}
	if p.IsValid() {
		sc.TraceID, sc.State = p.TraceID, p.State
	} else {
		sc.TraceID = newTraceID()
	}
	recording := !p.IsValid() || p.Sampled()
	if recording {
		sc.Flags = p.Flags | flagSampled
	} else {
		sc.Flags = p.Flags &^ flagSampled
	}
	s := &span{t: t, recording: recording}
	s.d = SpanData{Name: name, Context: sc, Kind: kind, Start: time.Now(), Resource: t.resource, Scope: t.scope}
	if p.IsValid() {
		s.d.Parent = p.SpanID
	}
	s.SetAttributes(attrs...)
	return withSpanContext(ctx, sc), s
}

// SpanContext is the span's ids.
func (s *span) SpanContext() SpanContext { return s.d.Context }

// SetAttributes adds attributes; one whose key is already set replaces
// its value in place.
func (s *span) SetAttributes(attrs ...KeyValue) {
	s.edit(func(d *SpanData) {
	next:
		for _, a := range attrs {
			for i := range d.Attributes {
				if d.Attributes[i].Key == a.Key {
					d.Attributes[i].Value = a.Value
					continue next
				}
			}
			d.Attributes = append(d.Attributes, a)
		}
	})
}

// edit changes the data of a recording span that has not ended.
func (s *span) edit(change func(d *SpanData)) {
	if !s.recording {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		change(&s.d)
	}
}

// SetError sets the span's status to error, with a description.
func (s *span) SetError(description string) {
	s.edit(func(d *SpanData) { d.Status, d.StatusDescription = CodeError, description })
}

// AddEvent records an event now.
func (s *span) AddEvent(name string, attrs ...KeyValue) {
	s.edit(func(d *SpanData) {
		if len(d.Events) == maxEvents {
			d.Events = append(d.Events[:0], d.Events[1:]...)
		}
		d.Events = append(d.Events, Event{Name: name, Time: time.Now(), Attributes: attrs})
	})
}

// End ends the span (once) and hands it to the batch processor.
func (s *span) End() {
	if !s.recording {
		return
	}
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	s.d.End = time.Now()
	d := s.d
	s.mu.Unlock()
	s.t.onEnd(&d)
}
