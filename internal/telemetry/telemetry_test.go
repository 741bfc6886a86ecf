package telemetry

import (
	"errors"
	"testing"

	"github.com/reinsdev/reins/internal/config"
)

// TestResolve: nothing is traced without an endpoint; the variables win
// over the config; the base endpoint gets /v1/traces; grpc is refused;
// OTEL_SDK_DISABLED turns it off.
func TestResolve(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	cfg := config.Telemetry{OTLPEndpoint: "http://collector:4318", Headers: map[string]string{"a": "1"}}
	for _, tc := range []struct {
		name string
		env  func(string) string
		cfg  config.Telemetry
		ok   bool
		url  string
		err  error
	}{
		{"nothing", env(), config.Telemetry{}, false, "", nil},
		{"config", env(), cfg, true, "http://collector:4318/v1/traces", nil},
		{"config full url", env(), config.Telemetry{OTLPEndpoint: "http://c/v1/traces"}, true, "http://c/v1/traces", nil},
		{"env base wins", env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://e:4318/"), cfg, true, "http://e:4318/v1/traces", nil},
		{"env traces as is", env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t/x", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://e"), cfg, true, "http://t/x", nil},
		{"disabled", env("OTEL_SDK_DISABLED", "true"), cfg, false, "", nil},
		{"grpc", env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), cfg, false, "", ErrProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ok, err := Resolve(tc.env, tc.cfg)
			if ok != tc.ok || s.URL != tc.url || !errors.Is(err, tc.err) {
				t.Errorf("got %q %v %v, want %q %v %v", s.URL, ok, err, tc.url, tc.ok, tc.err)
			}
		})
	}
	s, _, _ := Resolve(env("OTEL_EXPORTER_OTLP_HEADERS", "b=x%20y, c=3"), cfg)
	if s.Headers["a"] != "1" || s.Headers["b"] != "x y" || s.Headers["c"] != "3" {
		t.Errorf("headers %v", s.Headers)
	}
}
