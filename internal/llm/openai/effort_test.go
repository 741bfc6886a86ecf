package openai

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinsdev/reins/internal/llm"
)

// TestRequestEffort: an effort goes on the chat wire as reasoning_effort,
// the string itself; none sends no field (the provider's default).
func TestRequestEffort(t *testing.T) {
	msgs := []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "hi"}}}}
	for _, e := range []llm.Effort{"", llm.EffortLow, llm.EffortHigh} {
		got := capture(t, &Client{BaseURL: "/", Provider: "openai"}, &llm.Request{Model: "o3", Messages: msgs, Effort: e})
		body := got.body.(map[string]any)
		v, ok := body["reasoning_effort"]
		if e == "" {
			if ok {
				t.Errorf("no effort: reasoning_effort = %v sent", v)
			}
			continue
		}
		if diff := cmp.Diff(string(e), v); diff != "" {
			t.Errorf("effort %s: reasoning_effort (-want +got):\n%s", e, diff)
		}
	}
}
