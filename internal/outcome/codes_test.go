package outcome_test

import (
	"testing"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
)

// Every failure code reins writes is in the one closed list, so no surface
// turns a real code into "unknown" (on main, LOG_WRITE, MAX_WAKEUPS and
// NO_SUMMARY were missing from the in-process list, MAX_WAKEUPS and
// NO_SUMMARY from the ACP one).
func TestFailureCodesClosedSet(t *testing.T) {
	written := []string{agent.CodeMaxSteps, agent.CodeMaxWakeups, agent.CodeLogWrite, agent.CodeNoSummary}
	written = append(written,
		llm.CodeEmptyResponse, llm.CodeContextWindowExceeded, llm.CodeStreamClosed,
		llm.CodeMalformedResponse, llm.CodeRateLimit, llm.CodeServer, llm.CodeAuth,
		llm.CodeInvalidRequest, llm.CodeTimeout, llm.CodeTransport, llm.CodeAborted,
		llm.CodeQuota)
	for _, c := range written {
		if !outcome.KnownCode(c) {
			t.Errorf("failure code %s is not in outcome's closed list", c)
		}
		if got := outcome.CodeCategory(c); got != outcome.Category(c) {
			t.Errorf("CodeCategory(%s) = %s", c, got)
		}
	}
	for _, c := range []string{"", "unknown", "FINISH_REASON_FROM_PROVIDER", "max_steps"} {
		if outcome.KnownCode(c) || outcome.CodeCategory(c) != outcome.CategoryUnknown {
			t.Errorf("code %q must not be known", c)
		}
	}
	if got, want := len(outcome.FailureCodes()), len(written); got != want {
		t.Errorf("closed list holds %d codes, reins writes %d: %v", got, want, outcome.FailureCodes())
	}
}
