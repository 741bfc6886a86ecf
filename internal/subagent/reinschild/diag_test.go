package reinschild

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/reinsdev/reins/internal/childproc"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/sdk"
)

// A failed start reports its own fact unless the caller cancelled it, and
// the shutdown fact when its rollback could not be confirmed — never a
// claim of quiescence it did not observe.
func TestStartErrorFacts(t *testing.T) {
	p := &provider{}
	req := subagent.Request{RunID: "run-1", Agent: &config.Agent{Name: "x"}}
	startup := diag(outcome.StageInitialize, outcome.CategoryTransport, outcome.StopError).String()
	shutdown := "Subagent failure (provider: reins; stage: shutdown; category: unknown; stop reason: error)"
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name          string
		ctx           context.Context
		cleanupFailed bool
		want          string
	}{
		{"failure", context.Background(), false, startup},
		{"failure, cleanup failed", context.Background(), true, startup + "\n" + shutdown},
		{"cancelled", cancelled, false, ""},
		{"cancelled, cleanup failed", cancelled, true, shutdown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := p.startError(tc.ctx, req, diag(outcome.StageInitialize, outcome.CategoryTransport, outcome.StopError), errors.New("raw"), tc.cleanupFailed)
			var se *subagent.StartError
			if !errors.As(err, &se) || se.Diagnostic != tc.want {
				t.Errorf("diagnostic %q, want %q", se.Diagnostic, tc.want)
			}
		})
	}
}

// classify reads typed errors only, through wrapping and joins.
func TestClassify(t *testing.T) {
	code := func(n int) *int { return &n }
	tests := []struct {
		name  string
		stage outcome.Stage
		err   error
		want  outcome.Diagnostic
	}{
		{"transport with exit code, joined with a cleanup failure", outcome.StageInitialize,
			errors.Join(&sdk.TransportClosedError{Exited: true, ExitCode: 5, Stderr: "secret"}, fmt.Errorf("%w (x)", sdk.ErrNotQuiescent)),
			outcome.Diagnostic{Provider: "reins", Stage: "initialize", Category: "transport", StopReason: "error", ExitCode: code(5)}},
		{"transport with signal", outcome.StageSessionRun, &sdk.TransportClosedError{Exited: true, ExitCode: -1, Signal: "SIGSEGV"},
			outcome.Diagnostic{Provider: "reins", Stage: "session-run", Category: "transport", StopReason: "error", Signal: "SIGSEGV"}},
		{"transport, exit not observed", outcome.StageSessionRun, &sdk.TransportClosedError{},
			outcome.Diagnostic{Provider: "reins", Stage: "session-run", Category: "transport", StopReason: "error"}},
		{"wrapped protocol error", outcome.StageSessionRun, fmt.Errorf("ctx: %w", &sdk.ProtocolError{Reason: sdk.ReasonErrorResponse, Message: "secret"}),
			outcome.Diagnostic{Provider: "reins", Stage: "session-run", Category: "protocol", StopReason: "error"}},
		{"spawn failure at initialize", outcome.StageInitialize, &sdk.SpawnError{Err: errors.New("secret")},
			outcome.Diagnostic{Provider: "reins", Stage: "initialize", Category: "configuration", StopReason: "error"}},
		{"request timeout", outcome.StageSessionRun, &sdk.RequestTimeoutError{Method: "session/prompt"},
			outcome.Diagnostic{Provider: "reins", Stage: "session-run", Category: "unknown", StopReason: "error"}},
		{"anything else", outcome.StageSessionRun, errors.New("secret"),
			outcome.Diagnostic{Provider: "reins", Stage: "session-run", Category: "unknown", StopReason: "error"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := classify(tc.stage, tc.err).String(); got != tc.want.String() {
				t.Errorf("got %q, want %q", got, tc.want.String())
			}
		})
	}
}

func TestChildEnv(t *testing.T) {
	got := childproc.Environ([]string{"A=1", "B=2", "PATH=/bin"}, map[string]string{"B": "3", "C": "4"})
	want := []string{"A=1", "PATH=/bin", "B=3", "C=4"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("env %v, want %v", got, want)
	}
}
