package pichild

import (
	"testing"

	"github.com/reinsdev/reins/internal/llm"
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
