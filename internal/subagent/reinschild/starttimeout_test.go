package reinschild_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/sdkserver/sdkfake"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/subagent/reinschild"
)

// The agent's timeout covers the start, and every start has a deadline
// (subagents.startTimeout), shorter than the per-request timeout here
// (issue 14 item 3: a runtime that never answered initialize was bounded
// only by the 60 s request timeout, whatever the agent file said).
func TestStartTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		agent   time.Duration
		start   time.Duration
		diag    string
		stopped outcome.StopReason
	}{
		{"agent timeout", 700 * time.Millisecond, 0, line("initialize", "timeout", "aborted"), outcome.StopAborted},
		{"start deadline", 0, 700 * time.Millisecond, line("initialize", "timeout", "error"), outcome.StopError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, reinschild.Options{RequestTimeout: 30 * time.Second, StartTimeout: tc.start})
			ag := f.agent(sdkfake.ScenarioHangInit, sdkfake.EnvStubborn+"=1")
			ag.Timeout = tc.agent
			began := time.Now()
			_, err := f.prov.Start(context.Background(), request(t, ag))
			var se *subagent.StartError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a StartError", err)
			}
			if se.Diagnostic != tc.diag || se.StopReason != tc.stopped {
				t.Errorf("got (%q, %q), want (%q, %q)", se.Diagnostic, se.StopReason, tc.diag, tc.stopped)
			}
			if d := time.Since(began); d > 15*time.Second {
				t.Errorf("Start took %s", d)
			}
		})
	}
}
