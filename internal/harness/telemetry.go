package harness

import (
	"context"
	"errors"
	"fmt"

	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/telemetry"
)

// startTelemetry sets up tracing when an endpoint is configured
// (OTEL_EXPORTER_OTLP_* or config `telemetry`, docs/telemetry.md); with
// none, nothing is started. A bad endpoint is a config error.
func (h *Harness) startTelemetry() error {
	s, ok, err := telemetry.Resolve(h.Getenv, h.Config.Telemetry)
	if errors.Is(err, telemetry.ErrProtocol) {
		// OTEL_EXPORTER_OTLP_PROTOCOL=grpc may be set for other programs:
		// reins runs untraced and says why in the host log (config
		// `protocol: grpc` is refused by the config itself).
		h.Logf("telemetry: off: %v", err)
		return nil
	}
	if err != nil {
		return &ConfigError{fmt.Errorf("telemetry: %w", err)}
	}
	if ok {
		h.Telemetry = telemetry.Start(telemetry.Options{Settings: s, Getenv: h.Getenv, Logf: h.Logf, Version: h.Version})
	}
	return nil
}

// traceSession gives s's loop and manager their tracers (nil when nothing
// is traced); parent is the trace context the session continues (a
// child's run span), empty for a root session.
func (h *Harness) traceSession(s *Session, agentName string, parent subagent.TraceContext) {
	if h.Telemetry == nil {
		return
	}
	hd := s.Log.Header()
	s.Agent.Trace = h.Telemetry.Agent(s.Agent, telemetry.Session{ID: hd.ID, Agent: agentName, Depth: hd.DelegationDepth, Parent: parent})
	s.Subagents.Tracer = h.Telemetry.Runs()
}

// shutdownTelemetry flushes the spans (bounded) and counts the dropped
// ones in the host log.
func (h *Harness) shutdownTelemetry() {
	h.Telemetry.Shutdown(context.Background())
}
