// Package telemetry exports the OpenTelemetry traces of a delegation tree:
// a span per run, turn, model request (`chat`), tool call
// (`execute_tool`) and child run, under the GenAI semantic conventions
// (docs/telemetry.md). It implements the loop's and the manager's hooks
// (agent.Tracer, subagent.RunTracer), so neither links a tracing library.
//
// Nothing is set up unless an endpoint is configured (Resolve). Spans are
// recorded by the package itself (span.go: the OpenTelemetry SDK cost
// every process about 1 MiB and twenty package initialisers at start-up)
// and go through a batch processor — a bounded queue that drops rather
// than blocks (batch.go) — to an OTLP/HTTP exporter that encodes JSON
// itself (otlpjson.go): the official OTLP exporters link gRPC and
// protobuf, whose package initialisers every reins process, traced or
// not, would pay at start-up (BENCHMARKS.md). What was dropped is counted
// and reported in the host log when the process shuts telemetry down.
//
// Exit never waits on a collector that has not proved it answers: Start
// sends an empty export (a probe) at once, while the run goes on; at
// Shutdown the final flush waits (at most ShutdownTimeout) only when the
// probe or an earlier export was answered 2xx. Otherwise what is still
// queued or in flight is abandoned at once and counted as dropped, so a
// collector that is down, answers errors, or holds the request open adds
// nothing to a run's exit (docs/telemetry.md, "When the collector is
// down").
package telemetry

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reinsdev/reins/internal/config"
)

// Settings say where spans go and what they may hold.
type Settings struct {
	// URL is the OTLP/HTTP traces endpoint (…/v1/traces).
	URL     string
	Headers map[string]string
	// Content lets prompt, completion and tool text into span attributes.
	Content bool
	// Service is the resource's service.name (OTEL_SERVICE_NAME; "reins").
	Service string
}

// ErrProtocol is an OTLP protocol reins does not speak (grpc).
var ErrProtocol = errors.New("OTLP protocol not supported: reins sends OTLP/HTTP (http/json); point it at the collector's HTTP port (4318)")

// Resolve decides whether and where to trace: the standard variables
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, used as is; OTEL_EXPORTER_OTLP_ENDPOINT,
// with /v1/traces appended; the matching _HEADERS and _PROTOCOL;
// OTEL_SERVICE_NAME; OTEL_SDK_DISABLED=true turns it off) over config
// `telemetry`. ok is false when no endpoint is set.
func Resolve(getenv func(string) string, c config.Telemetry) (s Settings, ok bool, err error) {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return Settings{}, false, nil
	}
	s = Settings{Content: c.Content, Service: "reins", Headers: map[string]string{}}
	if v := getenv("OTEL_SERVICE_NAME"); v != "" {
		s.Service = v
	}
	switch {
	case getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "":
		s.URL = getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	case getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		s.URL = tracesURL(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), true)
	case c.OTLPEndpoint != "":
		s.URL = tracesURL(c.OTLPEndpoint, false)
	default:
		return Settings{}, false, nil
	}
	if u, perr := url.Parse(s.URL); perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Settings{}, false, errors.New("telemetry endpoint: want an http:// or https:// URL")
	}
	proto := c.Protocol
	for _, k := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		if v := getenv(k); v != "" {
			proto = v
		}
	}
	if proto == "grpc" {
		return Settings{}, false, ErrProtocol
	}
	for k, v := range c.Headers {
		s.Headers[k] = v
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		for kv := range strings.SplitSeq(getenv(k), ",") {
			name, val, ok := strings.Cut(kv, "=")
			if !ok || strings.TrimSpace(name) == "" {
				continue
			}
			if dv, err := url.PathUnescape(strings.TrimSpace(val)); err == nil {
				val = dv
			}
			s.Headers[strings.TrimSpace(name)] = val
		}
	}
	return s, true, nil
}

// tracesURL is the traces endpoint of a base URL: the standard variable's
// base always gets /v1/traces; the config's may already name it.
func tracesURL(base string, always bool) string {
	if !always && strings.HasSuffix(base, "/v1/traces") {
		return base
	}
	return strings.TrimRight(base, "/") + "/v1/traces"
}

// Options are the inputs of Start.
type Options struct {
	Settings
	// Exporter replaces the OTLP/HTTP exporter (tests: spans kept in
	// memory).
	Exporter SpanExporter
	// Getenv reads TRACEPARENT and TRACESTATE: a process started by a
	// traced parent continues its trace (os.Getenv when nil is not
	// assumed: nil reads nothing).
	Getenv func(string) string
	// Logf is the host log: the first export failure and, at Shutdown,
	// what was dropped.
	Logf func(format string, args ...any)
	// Version is the reins version (the resource's service.version).
	Version string
	// ShutdownTimeout bounds the final flush to a collector that has
	// answered (ShutdownTimeout when zero; tests set it long to show that
	// an unanswering collector is not waited for at all).
	ShutdownTimeout time.Duration
}

// Telemetry is a running exporter and the tracers over it. A nil
// *Telemetry traces nothing: its hooks are nil.
type Telemetry struct {
	resource *Resource
	scope    Scope
	batch    *batcher
	content  bool
	logf     func(string, ...any)
	exp      *countingExporter
	ended    atomic.Int64
	// parent is the trace this process continues (TRACEPARENT); zero
	// when none.
	parent SpanContext
	once   sync.Once
	// shutdownTimeout bounds the final flush (Options.ShutdownTimeout).
	shutdownTimeout time.Duration
	// probed is closed when the start-up probe has finished, answered or
	// not.
	probed chan struct{}
}

// Queue bounds: the batch processor holds at most MaxQueue spans and drops
// beyond it (a dead or slow collector never blocks a run); ExportTimeout
// bounds one export and ShutdownTimeout the final flush.
const (
	MaxQueue        = 2048
	BatchTimeout    = time.Second
	ExportTimeout   = 5 * time.Second
	ShutdownTimeout = 2 * time.Second
)

// Start sets up the exporter and the batch processor.
func Start(o Options) *Telemetry {
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	exp := o.Exporter
	if exp == nil {
		exp = newOTLPJSON(o.URL, o.Headers)
	}
	t := &Telemetry{content: o.Content, logf: logf,
		shutdownTimeout: o.ShutdownTimeout, probed: make(chan struct{})}
	if t.shutdownTimeout <= 0 {
		t.shutdownTimeout = ShutdownTimeout
	}
	t.exp = newCountingExporter(exp, logf)
	service := o.Service
	if service == "" {
		service = "reins"
	}
	// process.pid tells apart the processes of one trace (a parent, its
	// reins children, a worker) in a trace viewer. Sorted by key, as the
	// SDK's resource was.
	t.resource = &Resource{Attributes: []KeyValue{intAttr("process.pid", os.Getpid()),
		strAttr("service.name", service), strAttr("service.version", o.Version)}}
	t.scope = Scope{Name: "github.com/reinsdev/reins", Version: o.Version}
	if o.Getenv != nil {
		t.parent, _ = ParseTraceparent(o.Getenv("TRACEPARENT"), o.Getenv("TRACESTATE"))
	}
	t.batch = newBatcher(t.exp)
	go func() {
		defer close(t.probed)
		t.exp.probe()
	}()
	return t
}

// onEnd counts an ended span and queues it for export (dropped when the
// queue is full; not counted once telemetry has shut down).
func (t *Telemetry) onEnd(d *SpanData) {
	if t.batch.stopped.Load() {
		return
	}
	t.ended.Add(1)
	t.batch.enqueue(d)
}

// Shutdown flushes what is queued and writes to the host log how many
// spans ended, were exported, and were dropped. It waits for the flush
// (at most ShutdownTimeout) only when the collector has answered an
// export 2xx; otherwise it abandons what is queued or in flight at once
// (the package comment).
func (t *Telemetry) Shutdown(ctx context.Context) {
	if t == nil {
		return
	}
	t.once.Do(func() { t.shutdown(ctx) })
}

func (t *Telemetry) shutdown(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, t.shutdownTimeout)
	defer cancel()
	answered := t.exp.answered.Load()
	if !answered {
		// Not one 2xx from the collector: every export from here on, and
		// the one in flight, fails at once instead of being waited for.
		t.exp.abandon()
	}
	if err := t.batch.shutdown(ctx); err != nil {
		// The flush outlived its bound: what is in flight or queued is
		// abandoned (and counted dropped), so nothing outlives Shutdown.
		t.logf("telemetry: shutdown: %v", err)
		t.exp.abandon()
		<-t.batch.done
	}
	_ = t.exp.next.Shutdown(ctx)
	t.exp.abandon() // the probe, if it still waits
	select {
	case <-t.probed:
	case <-ctx.Done():
	}
	ended, sent := t.ended.Load(), t.exp.sent.Load()
	if dropped := ended - sent; dropped > 0 {
		why := "queue full, collector unreachable or refusing"
		if !answered {
			why = "the collector had not answered by exit, which did not wait for it"
		}
		t.logf("telemetry: %d spans ended, %d exported, %d dropped (%s)", ended, sent, dropped, why)
	}
}

// Stats are the span counts so far (for tests and the host log).
func (t *Telemetry) Stats() (ended, exported, failed int64) {
	return t.ended.Load(), t.exp.sent.Load(), t.exp.failed.Load()
}

// countingExporter counts what was exported and what failed, logs the
// first failure, and hides failures from the batch processor. It records whether the
// collector has answered 2xx, and can be abandoned: every export then
// fails at once, the one in flight included.
type countingExporter struct {
	next         SpanExporter
	logf         func(string, ...any)
	sent, failed atomic.Int64
	logged       atomic.Bool
	// answered is set by the first export (or probe) the collector
	// answered 2xx.
	answered atomic.Bool
	// gone is cancelled by abandon.
	gone    context.Context
	abandon context.CancelFunc
}

func newCountingExporter(next SpanExporter, logf func(string, ...any)) *countingExporter {
	e := &countingExporter{next: next, logf: logf}
	e.gone, e.abandon = context.WithCancel(context.Background())
	return e
}

// probe sends an empty export (a valid OTLP request every collector
// answers), so that a collector proves it answers while the run goes on,
// before the exit needs to know. Its failure is not logged: the first
// real export's is.
func (e *countingExporter) probe() {
	ctx, cancel := context.WithTimeout(e.gone, ExportTimeout)
	defer cancel()
	if e.next.ExportSpans(ctx, nil) == nil {
		e.answered.Store(true)
	}
}

func (e *countingExporter) ExportSpans(ctx context.Context, spans []*SpanData) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(e.gone, cancel)()
	err := e.gone.Err()
	if err == nil {
		err = e.next.ExportSpans(ctx, spans)
	}
	if err == nil {
		e.answered.Store(true)
	}
	if err != nil {
		e.failed.Add(int64(len(spans)))
		if e.logged.CompareAndSwap(false, true) {
			e.logf("telemetry: export failed (further failures are counted at exit): %v", err)
		}
		return nil
	}
	e.sent.Add(int64(len(spans)))
	return nil
}
