package reinschild_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// A reins child is given what is left of the tree's budget (initialize
// budget) and enforces it on its side: a child that would loop forever
// stops at the budget by itself, and the parent's result says budget.
func TestReinsChildEnforcesTheRemainingBudget(t *testing.T) {
	b := budget.New(budget.Limits{Tokens: 1000})
	defer b.Stop()
	p := newParentOpts(t, `
replies:
  - match: delegate-now
    toolCalls:
      - {id: p1, name: subagent, arguments: {description: a looping child, agent: helper, prompt: "CHILD-TASK loop"}}
    usage: {input: 100, output: 50}
  - match: CHILD-TASK
    toolCalls:
      - {name: ls, arguments: {}}
    usage: {input: 200, output: 100}
  - match: hello.txt
    toolCalls:
      - {name: ls, arguments: {}}
    usage: {input: 200, output: 100}
    repeat: true
`, map[string]string{"helper": realChildAgent}, harness.SessionOptions{Budget: b})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := p.s.Run(ctx, "delegate-now")
	used, _, _, _ := b.Used()
	t.Logf("parent %s by %s; tree used %d tokens of 1000", res.Reason, res.By, used)
	if res.Reason != session.ReasonAborted || res.By != session.AbortedByBudget {
		t.Errorf("parent %s by %q, want aborted by budget", res.Reason, res.By)
	}
	events := p.events(t)
	starts := testutil.Decoded[session.SubagentStart](t, events, session.TypeSubagentStart)
	ends := testutil.Decoded[session.SubagentEnd](t, events, session.TypeSubagentEnd)
	if len(ends) != 1 || ends[0].StopReason != "aborted" || !strings.Contains(ends[0].Diagnostic, "provider: reins; stage: session-run; category: budget") {
		t.Fatalf("subagent/end %+v", ends)
	}
	child, err := session.Load(filepath.Join(p.home, "sessions", starts[0].ChildSession, session.FileName))
	if err != nil {
		t.Fatal(err)
	}
	// The child stopped itself: its own turn ended by its budget (850
	// tokens were left: three responses of 300 reach it).
	var last session.TurnEnd
	for _, te := range testutil.Decoded[session.TurnEnd](t, child.Events, session.TypeTurnEnd) {
		last = te
	}
	if last.Reason != session.ReasonAborted || last.By != session.AbortedByBudget {
		t.Errorf("the child's own turn ended %s by %q, want aborted by budget", last.Reason, last.By)
	}
	if used < 1000 || used > 1000+300 {
		t.Errorf("tree used %d tokens, want the budget plus at most one child response", used)
	}
}

// Two reins children run at once, each given the whole remainder: the
// parent counts their responses as they arrive, so the tree stops at its
// budget (plus one response per running agent), not at twice it.
func TestParallelReinsChildrenChargeLive(t *testing.T) {
	b := budget.New(budget.Limits{Tokens: 2000})
	defer b.Stop()
	p := newParentOpts(t, `
replies:
  - match: delegate-two
    toolCalls:
      - {id: p1, name: subagent, arguments: {description: loop one, agent: helper, prompt: "CHILD-TASK one"}}
      - {id: p2, name: subagent, arguments: {description: loop two, agent: helper, prompt: "CHILD-TASK two"}}
    usage: {input: 100, output: 50}
  - match: CHILD-TASK
    toolCalls:
      - {name: ls, arguments: {}}
    usage: {input: 200, output: 100}
    repeat: true
  - match: hello.txt
    toolCalls:
      - {name: ls, arguments: {}}
    usage: {input: 200, output: 100}
    chunkDelay: 20ms
    repeat: true
`, map[string]string{"helper": realChildAgent}, harness.SessionOptions{Budget: b})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := p.s.Run(ctx, "delegate-two")
	used, _, _, _ := b.Used()
	t.Logf("tree used %d tokens of 2000 with two reins children at once", used)
	if res.Reason != session.ReasonAborted || res.By != session.AbortedByBudget {
		t.Errorf("parent %s by %q", res.Reason, res.By)
	}
	// The parent's 150, then the children's responses until 2000; each of
	// the three agents of the tree may have one more response under way.
	// (Counted only at settle, the two children spent over 4000.)
	if used > 2000+3*300 {
		t.Errorf("tree used %d tokens: the children's spending was not counted as it arrived", used)
	}
	for _, e := range testutil.Decoded[session.SubagentEnd](t, p.events(t), session.TypeSubagentEnd) {
		if e.StopReason != "aborted" || !strings.Contains(e.Diagnostic, "category: budget") {
			t.Errorf("subagent/end %s %q", e.StopReason, e.Diagnostic)
		}
	}
}
