package openai

import (
	"encoding/json"
	"strings"

	"github.com/reinsdev/reins/internal/llm"
)

// Request wire structs: only the fields reins sends.

type chatRequest struct {
	Model         string         `json:"model"`
	Messages      []chatMessage  `json:"messages"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
	MaxTokens     int            `json:"max_tokens,omitempty"`
	Tools         []chatTool     `json:"tools,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is a pointer so an assistant message that only calls tools
	// sends an explicit null, which every compatible server accepts.
	Content          *string        `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatToolSpec `json:"function"`
}

type chatToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptySchema stands in for a tool without parameters: servers reject a
// null schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// encodeRequest renders req as a streaming chat-completions body. With
// deepseek set, assistant reasoning is sent back as reasoning_content, which
// DeepSeek requires on assistant messages of tool-call turns.
func encodeRequest(req *llm.Request, deepseek bool) ([]byte, error) {
	out := chatRequest{
		Model:         req.Model,
		Stream:        true,
		StreamOptions: &streamOptions{IncludeUsage: true},
		MaxTokens:     max(req.MaxTokens, 0),
		Messages:      make([]chatMessage, 0, len(req.Messages)+1),
	}
	if req.System != "" {
		out.Messages = append(out.Messages, chatMessage{Role: "system", Content: ptr(req.System)})
	}
	for _, m := range req.Messages {
		out.Messages = appendMessage(out.Messages, m, deepseek)
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 || string(params) == "null" {
			params = emptySchema
		}
		out.Tools = append(out.Tools, chatTool{
			Type:     "function",
			Function: chatToolSpec{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	return json.Marshal(out)
}

// appendMessage appends the wire messages for m. Tool results become one
// role "tool" message each, whatever role carried them, and come before any
// text of the same message: the wire wants them right after the assistant
// message that made the calls.
func appendMessage(out []chatMessage, m llm.Message, deepseek bool) []chatMessage {
	var text, reasoning strings.Builder
	var calls []chatToolCall
	results := 0
	for _, b := range m.Content {
		switch b.Type {
		case llm.BlockText:
			text.WriteString(b.Text)
		case llm.BlockReasoning:
			reasoning.WriteString(b.Text)
		case llm.BlockToolCall:
			args := b.Arguments
			if args == "" {
				args = "{}" // some servers parse arguments and reject ""
			}
			calls = append(calls, chatToolCall{
				ID: b.ID, Type: "function",
				Function: chatFunction{Name: b.Name, Arguments: args},
			})
		case llm.BlockToolResult:
			out = append(out, chatMessage{Role: "tool", ToolCallID: b.CallID, Content: ptr(b.Content)})
			results++
		}
	}

	switch m.Role {
	case llm.RoleAssistant:
		msg := chatMessage{Role: "assistant", ToolCalls: calls}
		if text.Len() > 0 || len(calls) == 0 {
			msg.Content = ptr(text.String())
		}
		if deepseek {
			msg.ReasoningContent = reasoning.String()
		}
		out = append(out, msg)
	case llm.RoleTool:
		// Only tool results, appended above.
	default:
		if text.Len() > 0 || results == 0 {
			out = append(out, chatMessage{Role: "user", Content: ptr(text.String())})
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }
