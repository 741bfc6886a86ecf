package session

import (
	"fmt"

	"github.com/reinsdev/reins/internal/llm"
)

// History derives the model history from events: user messages, assistant
// messages with content, and tool results, in log order. Chunks are replay
// material and never history; an assistant message with empty content (a
// usage-only record of a step cut by max-tokens) is skipped because it
// carries nothing the model could be shown.
func History(events []Event) ([]llm.Message, error) {
	var out []llm.Message
	for _, e := range events {
		switch e.Type {
		case TypeUserMessage:
			var d UserMessage
			if err := e.Decode(&d); err != nil {
				return nil, fmt.Errorf("session: event %d: %w", e.Seq, err)
			}
			out = append(out, d.Message)
		case TypeAssistantMessage:
			var d AssistantMessage
			if err := e.Decode(&d); err != nil {
				return nil, fmt.Errorf("session: event %d: %w", e.Seq, err)
			}
			if len(d.Message.Content) > 0 {
				out = append(out, d.Message)
			}
		case TypeToolResult:
			var d ToolResult
			if err := e.Decode(&d); err != nil {
				return nil, fmt.Errorf("session: event %d: %w", e.Seq, err)
			}
			out = append(out, llm.Message{Role: llm.RoleTool, Content: []llm.Block{{
				Type: llm.BlockToolResult, CallID: d.CallID, Content: d.Content, IsError: d.IsError,
			}}})
		}
	}
	return out, nil
}

// DanglingCalls returns the ids of tool calls in history that have no result,
// in order: what a crash between a tool call and its result leaves behind.
// A provider rejects such a history, so a resumed run answers them first.
func DanglingCalls(history []llm.Message) []llm.Block {
	answered := map[string]bool{}
	for _, m := range history {
		for _, b := range m.Content {
			if b.Type == llm.BlockToolResult {
				answered[b.CallID] = true
			}
		}
	}
	var out []llm.Block
	for _, m := range history {
		if m.Role != llm.RoleAssistant {
			continue
		}
		for _, b := range m.Content {
			if b.Type == llm.BlockToolCall && !answered[b.ID] {
				out = append(out, b)
			}
		}
	}
	return out
}
