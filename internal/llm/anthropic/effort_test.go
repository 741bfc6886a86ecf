package anthropic

import (
	"testing"

	"github.com/reinsdev/reins/internal/llm"
)

// TestRequestEffort: an effort turns on extended thinking with its budget,
// and max_tokens grows by that budget so the answer keeps its room
// (Anthropic counts thinking within max_tokens and wants it below).
func TestRequestEffort(t *testing.T) {
	for _, tt := range []struct {
		effort    llm.Effort
		maxTokens int
		budget    float64 // 0: no thinking field
		wantMax   float64
	}{
		{"", 0, 0, DefaultMaxTokens},
		{llm.EffortHigh, 0, 16384, DefaultMaxTokens + 16384},
		{llm.EffortLow, 1000, 2048, 1000 + 2048},
	} {
		got, _ := sent(t, &llm.Request{Model: "claude-x", Messages: []llm.Message{user("hi")}, Effort: tt.effort, MaxTokens: tt.maxTokens})
		body := got.(map[string]any)
		if body["max_tokens"] != tt.wantMax {
			t.Errorf("effort %q: max_tokens = %v, want %v", tt.effort, body["max_tokens"], tt.wantMax)
		}
		th, ok := body["thinking"].(map[string]any)
		if tt.budget == 0 {
			if ok {
				t.Errorf("no effort: thinking = %v sent", th)
			}
			continue
		}
		if !ok || th["type"] != "enabled" || th["budget_tokens"] != tt.budget {
			t.Errorf("effort %q: thinking = %v, want enabled with %v", tt.effort, body["thinking"], tt.budget)
		}
		if tt.budget >= body["max_tokens"].(float64) {
			t.Errorf("budget %v not below max_tokens %v", tt.budget, body["max_tokens"])
		}
	}
}
