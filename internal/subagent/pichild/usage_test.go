package pichild

import (
	"context"
	"testing"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/wrap"
)

// pi's counts become reins's (input is the whole prompt), and pi's own
// cost is the child's cost; without it the cost is unknown, never 0.
func TestUsageConversion(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *wrap.Usage
		want llm.Usage
	}{
		{"none", nil, llm.Usage{}},
		{"no cost", &wrap.Usage{Input: 10, Output: 2, CacheRead: 5, CacheWrite: 1}, llm.Usage{InputTokens: 16, OutputTokens: 2, CacheReadTokens: 5, CacheWriteTokens: 1}},
		{"priced", &wrap.Usage{Input: 10, Output: 2, Cost: &wrap.UsageCost{Total: 0.25}}, llm.Usage{InputTokens: 10, OutputTokens: 2, CostUSD: ptr(0.25)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := usage(tc.in)
			if (got.CostUSD == nil) != (tc.want.CostUSD == nil) || (got.CostUSD != nil && *got.CostUSD != *tc.want.CostUSD) {
				t.Fatalf("cost %v, want %v", got.CostUSD, tc.want.CostUSD)
			}
			got.CostUSD, tc.want.CostUSD = nil, nil
			if got != tc.want {
				t.Fatalf("usage %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Each pi message's usage is charged to the run's budget as it arrives,
// and the run says so, so the manager does not charge the total again.
func TestUsageChargedAsItArrives(t *testing.T) {
	f := newFixture(t, toolUseMsg+"\n"+stopMsg)
	req := f.request(func(a *config.Agent) { a.Model = "reins-mock/mock-model" })
	req.Budget = budget.New(budget.Limits{Tokens: 1 << 30})
	defer req.Budget.Stop()
	r, err := f.prov.Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	res := outcome.Settle(r.Wait(context.Background()))
	r.Dispose()
	used, _, _, _ := req.Budget.Used()
	if want := res.Usage.InputTokens + res.Usage.OutputTokens; used != want || want != 41 {
		t.Errorf("budget counted %d tokens, the result's usage is %d (want 41)", used, want)
	}
	if s, ok := r.(subagent.SelfCharging); !ok || !s.ChargesBudget() {
		t.Error("the run does not say it charged its budget")
	}
}
