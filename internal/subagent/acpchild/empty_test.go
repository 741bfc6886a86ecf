package acpchild

import (
	"testing"

	"github.com/reinsdev/reins/internal/outcome"
)

// An ACP child that ends end_turn without any output is not an answer: it
// settles error like a pi child that stops with empty content (issue 14
// item 5; it used to settle completed with empty output). max_tokens keeps
// its stop reason.
func TestEmptyAnswer(t *testing.T) {
	for _, tc := range []struct {
		after string
		stop  outcome.StopReason
		diag  string
	}{
		{"end_turn", outcome.StopError, "Subagent failure (provider: acp; stage: prompt; category: empty-output; stop reason: error)"},
		{"max_tokens", outcome.StopMaxTokens, ""},
	} {
		t.Run(tc.after, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			res := f.run(f.agent("silent", "", map[string]string{"ACP_AFTER": tc.after}))
			if res.StopReason != tc.stop || res.Diagnostic != tc.diag || res.Output != nil {
				t.Errorf("got (%s, %q, %v), want (%s, %q, no output)", res.StopReason, res.Diagnostic, res.Output, tc.stop, tc.diag)
			}
		})
	}
}
