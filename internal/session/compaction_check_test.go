package session

import (
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm"
)

// TestCraftedCompactionRefused: a context/compacted whose range would
// leave a tool result without its call (or a call without its result), or
// would replace the first prompt, is refused when the history is derived
// (reins run --resume), not sent to a provider that answers 400.
func TestCraftedCompactionRefused(t *testing.T) {
	call := func(id string) AssistantMessage {
		return AssistantMessage{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolCall, ID: id, Name: "ls", Arguments: `{}`}}}}
	}
	text := func(s string) AssistantMessage {
		return AssistantMessage{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: s}}}}
	}
	log := func(t *testing.T, from, to int64) []Event {
		return []Event{
			ev(t, 1, TypeUserMessage, userMsg("first")), // entry 0
			ev(t, 2, TypeAssistantMessage, call("c1")),  // 1
			ev(t, 3, TypeToolResult, ToolResult{CallID: "c1", Content: "r1"}),
			ev(t, 4, TypeAssistantMessage, call("c2")), // 3
			ev(t, 5, TypeToolResult, ToolResult{CallID: "c2", Content: "r2"}),
			ev(t, 6, TypeAssistantMessage, text("done")), // 5
			ev(t, 7, TypeUserMessage, userMsg("next")),
			ev(t, 8, TypeAssistantMessage, text("ok")),
			ev(t, 9, TypeContextCompacted, ContextCompacted{Summary: "s", Replaces: SeqRange{from, to}}),
		}
	}
	tests := []struct {
		from, to int64
		err      string
	}{
		{2, 5, ""},                          // whole steps: what compact.Choose picks
		{2, 6, ""},                          // up to before a user message
		{3, 8, "tool call from its result"}, // starts on a result: c1's call kept, its result gone
		{2, 4, "tool call from its result"}, // ends before c2's result: an orphan result
		{1, 1, "first prompt"},
		{1, 5, "first prompt"},
	}
	for _, tt := range tests {
		_, err := History(log(t, tt.from, tt.to))
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("replaces %d..%d: err = %v, want %q", tt.from, tt.to, err, tt.err)
		}
	}
}
