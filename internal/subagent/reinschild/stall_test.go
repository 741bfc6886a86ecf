package reinschild_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// TestStalledReinsChild is issue 17's acceptance 3 for reins children: the
// real runtime as the child, whose model stalls (keep-alives only, which
// are not progress); with subagents.stallTimeout 2s the parent stops it
// and its result is aborted with category stalled, within the stall
// timeout plus 2 s of its start.
func TestStalledReinsChild(t *testing.T) {
	const stall = 2 * time.Second
	p := newParent(t, `
replies:
  - match: delegate-now
    toolCalls:
      - {id: p1, name: subagent, arguments: {description: a stuck child, agent: helper, prompt: "CHILD-TASK stall"}}
  - match: CHILD-TASK
    fault: stall
    keepAlive: true
    chunkDelay: 100ms
    repeat: true
  - match: Diagnostic
    text: parent done
`, map[string]string{"helper": realChildAgent})
	p.s.Subagents.Limits.StallTimeout = stall
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := p.s.Run(ctx, "delegate-now")
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn %+v", res)
	}
	events := p.events(t)
	starts := testutil.Decoded[session.SubagentStart](t, events, session.TypeSubagentStart)
	ends := testutil.Decoded[session.SubagentEnd](t, events, session.TypeSubagentEnd)
	if len(starts) != 1 || len(ends) != 1 {
		t.Fatalf("subagent events %+v %+v", starts, ends)
	}
	var began, ended time.Time
	for _, e := range events {
		switch e.Type {
		case session.TypeSubagentStart:
			began = e.Time
		case session.TypeSubagentEnd:
			ended = e.Time
		}
	}
	took := ended.Sub(began)
	t.Logf("stalled reins child: %s %q after %s (stallTimeout %s)", ends[0].StopReason, ends[0].Diagnostic, took.Round(time.Millisecond), stall)
	want := "Subagent failure (provider: reins; stage: session-run; category: stalled; stop reason: aborted)"
	if ends[0].StopReason != "aborted" || ends[0].Diagnostic != want {
		t.Errorf("subagent/end %s %q, want aborted %q", ends[0].StopReason, ends[0].Diagnostic, want)
	}
	// The watch ended it, not the parent's 2-minute deadline: the bound
	// is generous, so that a busy machine's slower teardown cannot fail
	// it and a watch that never fired still does.
	if took > 3*stall+30*time.Second {
		t.Errorf("the stalled child ended %s after its start, more than 3 × stallTimeout + 30s", took)
	}
}

// A stalled background job: the parent hears first that the job is
// stalled, then that it finished failed with category stalled.
func TestStalledBackgroundJobNoticeFirst(t *testing.T) {
	p := newParent(t, `
replies:
  - match: delegate-bg
    toolCalls:
      - {id: p1, name: subagent, arguments: {description: a stuck job, agent: helper, prompt: "CHILD-TASK stall", run_in_background: true}}
  - match: CHILD-TASK
    fault: stall
    keepAlive: true
    chunkDelay: 100ms
    repeat: true
  - match: Started background job
    text: waiting
  - match: is stalled
    text: noted the stall
    repeat: true
  - match: "finished [status"
    text: parent done
    repeat: true
`, map[string]string{"helper": realChildAgent})
	p.s.Subagents.Limits.StallTimeout = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := p.s.Run(ctx, "delegate-bg")
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn %+v", res)
	}
	var notices []string
	for _, m := range testutil.Decoded[session.UserMessage](t, p.events(t), session.TypeUserMessage) {
		if txt := m.Message.Text(); strings.HasPrefix(txt, "background job") {
			notices = append(notices, txt)
		}
	}
	t.Logf("notices: %q", notices)
	if len(notices) != 2 ||
		notices[0] != "background job job-1 (subagent: a stuck job) is stalled: its child sent nothing for 1s; stopping it." ||
		!strings.Contains(notices[1], "finished [status: failed; aborted; diagnostic: Subagent failure (provider: reins; stage: session-run; category: stalled; stop reason: aborted)]") {
		t.Errorf("notices %q, want the stall first, then the failed job", notices)
	}
}
