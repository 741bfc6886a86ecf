package llm

import "testing"

func TestUsageAddCost(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	known := Usage{InputTokens: 10, CostUSD: f(0.5)}
	unknown := Usage{InputTokens: 10}
	tests := []struct {
		name string
		a, b Usage
		want *float64
	}{
		{"both known", known, known, f(1)},
		{"known plus unknown", known, unknown, nil},
		{"unknown plus known", unknown, known, nil},
		{"known plus nothing", known, Usage{}, f(0.5)},
		{"nothing plus known", Usage{}, known, f(0.5)},
		{"nothing plus nothing", Usage{}, Usage{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.a.Add(tt.b).CostUSD
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("cost = %v, want %v", got, tt.want)
			}
		})
	}
	if s := known.Add(known); s.CostUSD == known.CostUSD {
		t.Error("Add shares the cost pointer with an operand")
	}
	if !(Usage{}).IsZero() || known.IsZero() || (Usage{CostUSD: f(0)}).IsZero() {
		t.Error("IsZero")
	}
}
