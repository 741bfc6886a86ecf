package sdkserver

import (
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/sdk"
)

// initialize's budget over the config's, field by field; bad values are
// refused with a message naming the field.
func TestBudgetLimits(t *testing.T) {
	cfg := config.Budget{Tokens: 100, USD: 1}
	for _, tc := range []struct {
		name string
		p    *sdk.Budget
		want budget.Limits
		bad  bool
	}{
		{"absent", nil, budget.Limits{Tokens: 100, USD: 1}, false},
		{"override", &sdk.Budget{Tokens: 50, Time: "90s"}, budget.Limits{Tokens: 50, USD: 1, Time: 90 * time.Second}, false},
		{"negative", &sdk.Budget{Tokens: -1}, budget.Limits{}, true},
		{"bad time", &sdk.Budget{Time: "later"}, budget.Limits{}, true},
		{"zero time", &sdk.Budget{Time: "0s"}, budget.Limits{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := budgetLimits(tc.p, cfg)
			if tc.bad {
				if err == nil {
					t.Fatalf("accepted: %+v", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
