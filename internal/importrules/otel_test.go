package importrules

import "testing"

// TestNoOTelInReins: the reins binary links no OpenTelemetry package.
// internal/telemetry records spans itself (internal/telemetry/span.go):
// the OTel API and SDK cost every reins process — `reins version`, every
// `reins sdk` child, traced or not — about 1 MiB of RSS and some twenty
// package initialisers at start-up (issue 27; BENCHMARKS.md). Tests may
// still import OTel as a reference.
func TestNoOTelInReins(t *testing.T) {
	if bad := linked(deps(t, "cmd/reins"), []string{"go.opentelemetry.io"}); len(bad) > 0 {
		t.Errorf("cmd/reins links %v; telemetry must not bring the OpenTelemetry SDK back (internal/telemetry/span.go)", bad)
	}
}
