package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTelemetryConfig: `telemetry:` decodes its four keys, a later layer's
// content: false turns an earlier true off, and an unknown protocol or
// key stops with the key's path.
func TestTelemetryConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("telemetry: {otlpEndpoint: http://127.0.0.1:4318, headers: {x-team: k}, content: true}\n"), 0o644)
	c, err := Load(LoadOptions{Home: home, Extra: write("a.yaml", "telemetry: {protocol: http/protobuf}\n")})
	if err != nil {
		t.Fatal(err)
	}
	want := Telemetry{OTLPEndpoint: "http://127.0.0.1:4318", Headers: map[string]string{"x-team": "k"}, Protocol: "http/protobuf", Content: true}
	if c.Telemetry.OTLPEndpoint != want.OTLPEndpoint || c.Telemetry.Headers["x-team"] != "k" || c.Telemetry.Protocol != want.Protocol || !c.Telemetry.Content {
		t.Errorf("telemetry %+v, want %+v", c.Telemetry, want)
	}
	c, err = Load(LoadOptions{Home: home, Extra: write("b.yaml", "telemetry: {content: false}\n")})
	if err != nil || c.Telemetry.Content {
		t.Errorf("content: false in a later layer: %+v %v", c.Telemetry, err)
	}
	for _, bad := range []string{"telemetry: {protocol: grpc}\n", "telemetry: {endpoint: x}\n"} {
		if _, err := Load(LoadOptions{Extra: write("c.yaml", bad)}); err == nil || !strings.Contains(err.Error(), "telemetry.") {
			t.Errorf("%q: err %v", bad, err)
		}
	}
}
