package harness

import (
	"context"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// runawayScript delegates on every request, at every depth, forever: one
// foreground child and one background job per response, each 1500 tokens.
// Without a budget only maxDepth, max-steps and maxBackgroundJobs bound it.
const runawayScript = `
fallback:
  toolCalls:
    - {name: subagent, arguments: {description: go deeper, prompt: "loop again"}}
    - {name: subagent, arguments: {description: and again, prompt: "loop in the background", run_in_background: true}}
  usage: {input: 1000, output: 500}
`

// gauge wraps a model: it counts requests, the most in flight at once
// (the running agents), and the requests that started after the budget
// had run out: only one that checked the budget just before another
// agent's response used it up, at most one per running agent.
type gauge struct {
	inner  llm.Model
	budget *budget.Budget

	mu                          sync.Mutex
	requests, inflight, maxLive int
	late                        int
}

func (g *gauge) Stream(ctx context.Context, req *llm.Request) iter.Seq[llm.Chunk] {
	return func(yield func(llm.Chunk) bool) {
		g.mu.Lock()
		g.requests++
		g.inflight++
		g.maxLive = max(g.maxLive, g.inflight)
		if g.budget.Err() != nil {
			g.late++
		}
		g.mu.Unlock()
		defer func() {
			g.mu.Lock()
			g.inflight--
			g.mu.Unlock()
		}()
		for c := range g.inner.Stream(ctx, req) {
			if !yield(c) {
				return
			}
		}
	}
}

// TestRunawayTreeStopsAtTokenBudget is issue 17's acceptance 1: a model that
// delegates recursively and in loops, under a 20000-token budget, stops
// with at most one response of overshoot per running agent, and every
// result in the tree ends aborted with category budget.
func TestRunawayTreeStopsAtTokenBudget(t *testing.T) {
	f := newFixture(t, runawayScript, map[string]string{})
	m, err := f.h.ResolveModel("openai/test", f.url)
	if err != nil {
		t.Fatal(err)
	}
	const limit, perResponse = 20000, 1500
	b := budget.New(budget.Limits{Tokens: limit})
	defer b.Stop()
	g := &gauge{inner: m.Model, budget: b}
	m.Model = g
	s, err := f.h.NewSession(SessionOptions{Model: m, System: "parent", Budget: b})
	if err != nil {
		t.Fatal(err)
	}
	res := s.Run(context.Background(), "start the runaway")
	s.Close()

	used, _, _, _ := b.Used()
	t.Logf("tokens used %d of budget %d (%d requests, at most %d in flight at once, %d started after the budget ran out)",
		used, limit, g.requests, g.maxLive, g.late)
	if res.Reason != session.ReasonAborted || res.By != session.AbortedByBudget {
		t.Errorf("root turn %s by %q, want aborted by budget", res.Reason, res.By)
	}
	// A request checked the budget just before another agent's response
	// used it up: each running agent has at most that one.
	if g.late > g.maxLive {
		t.Errorf("%d model requests started after the budget ran out, more than the %d agents running", g.late, g.maxLive)
	}
	if used < limit {
		t.Errorf("stopped at %d tokens before the budget of %d ran out", used, limit)
	}
	// The response that crossed the line, plus one in flight per other
	// running agent.
	if over := used - limit; over > g.maxLive*perResponse {
		t.Errorf("overshoot %d tokens > %d running agents × %d", over, g.maxLive, perResponse)
	}
	if res.Usage.InputTokens+res.Usage.OutputTokens != used {
		t.Errorf("tree usage %+v, budget counted %d", res.Usage, used)
	}

	// Every session of the tree: every subagent/end is aborted with
	// category budget, and every turn that was stopped names the budget.
	dirs, _ := os.ReadDir(f.h.SessionsDir())
	var ends, sessions int
	for _, d := range dirs {
		sessions++
		events := loadEvents(t, filepath.Join(f.h.SessionsDir(), d.Name(), session.FileName))
		for _, e := range testutil.Decoded[session.SubagentEnd](t, events, session.TypeSubagentEnd) {
			ends++
			if e.StopReason != "aborted" || !strings.Contains(e.Diagnostic, "category: budget") {
				t.Errorf("session %s: subagent/end %s %q, want aborted with category budget", d.Name(), e.StopReason, e.Diagnostic)
			}
		}
		for _, te := range testutil.Decoded[session.TurnEnd](t, events, session.TypeTurnEnd) {
			if te.Reason != session.ReasonCompleted && te.By != session.AbortedByBudget {
				t.Errorf("session %s: turn/end %s by %q", d.Name(), te.Reason, te.By)
			}
		}
	}
	t.Logf("%d sessions, %d subagent results, all aborted with category budget", sessions, ends)
	if ends == 0 {
		t.Error("no child ever ran")
	}
}
