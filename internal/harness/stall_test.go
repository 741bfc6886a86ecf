package harness

import (
	"context"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// An in-process child is stalled when its model request makes no progress
// (keep-alives are not progress) for subagents.stallTimeout; a child whose
// tool runs longer than that is not.
func TestInProcessChildStall(t *testing.T) {
	f := newFixture(t, `
replies:
  - match: delegate-stall
    toolCalls:
      - {name: subagent, arguments: {description: a stuck child, prompt: "CHILD-STALL"}}
  - match: CHILD-STALL
    fault: stall
    keepAlive: true
    chunkDelay: 50ms
    repeat: true
  - match: delegate-slow-tool
    toolCalls:
      - {name: subagent, arguments: {description: a busy child, prompt: "CHILD-SLOW"}}
  - match: CHILD-SLOW
    toolCalls:
      - {name: bash, arguments: {command: "sleep 2; echo slept"}}
  - match: slept
    text: the tool finished
  - match: Diagnostic
    text: parent saw the stall
  - match: the tool finished
    text: parent done
`, map[string]string{})
	for _, tc := range []struct {
		prompt, stop, diag string
	}{
		{"delegate-stall", "aborted", "Subagent failure (provider: inprocess; stage: run; category: stalled; stop reason: aborted)"},
		{"delegate-slow-tool", "completed", ""},
	} {
		t.Run(tc.prompt, func(t *testing.T) {
			s := f.session(t)
			s.Subagents.Limits.StallTimeout = time.Second
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			t0 := time.Now()
			if res := s.Run(ctx, tc.prompt); res.Reason != session.ReasonCompleted {
				t.Fatalf("parent %+v", res)
			}
			s.Close()
			ends := testutil.Decoded[session.SubagentEnd](t, loadEvents(t, s.Log.Path()), session.TypeSubagentEnd)
			t.Logf("%s: child %s %q after %s", tc.prompt, ends[0].StopReason, ends[0].Diagnostic, time.Since(t0).Round(time.Millisecond))
			if len(ends) != 1 || ends[0].StopReason != tc.stop || ends[0].Diagnostic != tc.diag {
				t.Errorf("subagent/end %+v, want %s %q", ends, tc.stop, tc.diag)
			}
		})
	}
}
