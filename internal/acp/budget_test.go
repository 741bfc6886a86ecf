package acp

import (
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/session"
)

// session/new's _meta.reins.budget sets each prompt's budget over the
// config's; a malformed one is refused, never ignored.
func TestMetaBudget(t *testing.T) {
	cfg := config.Budget{Tokens: 5000, Time: time.Hour}
	for _, tc := range []struct {
		name string
		meta map[string]any
		want budget.Limits
		bad  bool
	}{
		{"none", nil, budget.Limits{Tokens: 5000, Time: time.Hour}, false},
		{"other vendor", map[string]any{"zed": map[string]any{"x": 1}}, budget.Limits{Tokens: 5000, Time: time.Hour}, false},
		{"override", map[string]any{"reins": map[string]any{"budget": map[string]any{"tokens": 100, "usd": 0.5, "time": "2m"}}},
			budget.Limits{Tokens: 100, USD: 0.5, Time: 2 * time.Minute}, false},
		{"unknown key", map[string]any{"reins": map[string]any{"budget": map[string]any{"dollars": 1}}}, budget.Limits{}, true},
		{"bad time", map[string]any{"reins": map[string]any{"budget": map[string]any{"time": "soon"}}}, budget.Limits{}, true},
		{"negative", map[string]any{"reins": map[string]any{"budget": map[string]any{"tokens": -1}}}, budget.Limits{}, true},
		{"not an object", map[string]any{"reins": map[string]any{"budget": "lots"}}, budget.Limits{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := metaBudget(tc.meta)
			if tc.bad {
				if err == nil {
					t.Fatal("accepted")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := m.over(cfg); got != tc.want {
				t.Fatalf("limits %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A prompt its budget stopped ends max_turn_requests (a limit the agent
// hit), not cancelled (which the editor asks for).
func TestBudgetStopReason(t *testing.T) {
	for by, want := range map[string]sdk.StopReason{
		session.AbortedByBudget: sdk.StopReasonMaxTurnRequests,
		session.AbortedByUser:   sdk.StopReasonCancelled,
	} {
		r, err := response(agent.TurnResult{Reason: session.ReasonAborted, By: by}, "")
		if err != nil || r.StopReason != want {
			t.Errorf("aborted by %s: %v %v, want %s", by, r.StopReason, err, want)
		}
	}
}
