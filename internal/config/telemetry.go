package config

import "github.com/goccy/go-yaml/ast"

// Telemetry is config `telemetry:` (docs/telemetry.md): where reins sends
// its OpenTelemetry traces. The standard OTEL_EXPORTER_OTLP_* variables
// override it; with neither, nothing is traced.
type Telemetry struct {
	// OTLPEndpoint is the collector's OTLP/HTTP base URL
	// (http://127.0.0.1:4318; traces go to its /v1/traces), or a URL that
	// already ends in /v1/traces.
	OTLPEndpoint string
	// Headers are sent with every export (a vendor's API key header).
	Headers map[string]string
	// Protocol is the OTLP protocol: http/json (what reins sends) or
	// http/protobuf (accepted on the same port by every collector; reins
	// sends JSON there too); grpc is refused (not built into reins).
	Protocol string
	// Content puts prompts, completions and tool arguments and results in
	// span attributes; false (the default) keeps every model-, tool- and
	// child-written text out of the spans.
	Content bool
}

// rawTelemetry is one layer's `telemetry:`; content is nil when the
// layer does not set it.
type rawTelemetry struct {
	Telemetry
	content *bool
}

// telemetry decodes one layer's `telemetry:` over t.
func (d *decoder) telemetry(n ast.Node, path string, t *rawTelemetry) error {
	return d.fields(n, path, []string{"otlpEndpoint", "headers", "protocol", "content"}, func(k string, v ast.Node, kp string) error {
		switch k {
		case "otlpEndpoint":
			s, err := d.str(v, kp)
			if err == nil && s != nil {
				t.OTLPEndpoint = *s
			}
			return err
		case "headers":
			m, err := d.strMap(v, kp)
			if err == nil && m != nil {
				t.Headers = m
			}
			return err
		case "protocol":
			s, err := d.str(v, kp)
			if err != nil || s == nil {
				return err
			}
			switch *s {
			case "http/json", "http/protobuf":
				t.Protocol = *s
				return nil
			}
			return d.valueErr(d.resolve(v), kp, "http/json or http/protobuf (reins sends OTLP/HTTP with JSON; grpc is not built in)")
		case "content":
			b, err := d.boolean(v, kp)
			t.content = b
			return err
		}
		return nil
	})
}
