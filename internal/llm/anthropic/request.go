package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/reinsdev/reins/internal/llm"
)

// DefaultMaxTokens is sent when a request sets no limit: Anthropic rejects a
// request without max_tokens.
const DefaultMaxTokens = 8192

// redactedPrefix marks a reasoning block's Signature as the opaque data of an
// Anthropic redacted_thinking block. llm.Block has no field for that data and
// a Signature is already "an opaque provider token", so the adapter keeps
// both shapes in it; the prefix cannot begin a real (base64) signature.
const redactedPrefix = "redacted_thinking:"

// emptyObject is the tool input sent when a call's arguments are not a JSON
// object: Anthropic requires an object, and the model sees the tool's own
// complaint about missing arguments instead of a rejected request.
var emptyObject = json.RawMessage(`{}`)

type wireRequest struct {
	Model     string        `json:"model"`
	MaxTokens int           `json:"max_tokens"`
	Stream    bool          `json:"stream"`
	System    string        `json:"system,omitempty"`
	Tools     []wireTool    `json:"tools,omitempty"`
	Messages  []wireMessage `json:"messages"`
}

type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type wireMessage struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

// The request content blocks are one struct per type so that required empty
// fields (a thinking block's text, a result's is_error) are still sent.
type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type thinkingBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type redactedThinkingBlock struct {
	Type string `json:"type"`
	Data string `json:"data"`
}

type toolUseBlock struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type toolResultBlock struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error"`
}

var errToolSchema = errors.New("anthropic: tool parameters are not valid JSON")

// encodeRequest renders req as an Anthropic Messages request body.
func encodeRequest(req *llm.Request) ([]byte, error) {
	w := wireRequest{
		Model:     req.Model,
		MaxTokens: req.MaxTokens,
		Stream:    true,
		System:    req.System,
		Messages:  wireMessages(req.Messages),
	}
	if w.MaxTokens <= 0 {
		w.MaxTokens = DefaultMaxTokens
	}
	for _, t := range req.Tools {
		schema := t.Parameters
		if len(bytes.TrimSpace(schema)) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		} else if !json.Valid(schema) {
			return nil, errToolSchema
		}
		w.Tools = append(w.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	return json.Marshal(w)
}

// wireMessages converts the history. Tool results travel in user messages,
// and Anthropic requires strictly alternating roles with every result of an
// assistant turn in the one user message that follows it, so consecutive
// messages of the same wire role are merged and, within a user message,
// tool results are moved before any text.
func wireMessages(msgs []llm.Message) []wireMessage {
	out := make([]wireMessage, 0, len(msgs))
	for _, m := range msgs {
		role, content := wireContent(m)
		if len(content) == 0 {
			// Anthropic rejects empty content; an assistant message holding
			// only unsigned reasoning has nothing it can send back.
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, content...)
			continue
		}
		out = append(out, wireMessage{Role: role, Content: content})
	}
	for i := range out {
		if out[i].Role == "user" {
			out[i].Content = resultsFirst(out[i].Content)
		}
	}
	return out
}

func wireContent(m llm.Message) (role string, content []any) {
	role = "user"
	if m.Role == llm.RoleAssistant {
		role = "assistant"
	}
	for _, b := range m.Content {
		switch b.Type {
		case llm.BlockText:
			// Anthropic rejects empty text blocks.
			if b.Text != "" {
				content = append(content, textBlock{Type: "text", Text: b.Text})
			}
		case llm.BlockReasoning:
			if role != "assistant" || b.Signature == "" {
				// Thinking without its signature is rejected on the way
				// back, so unsigned reasoning (another provider's, or a cut
				// stream's) stays in the log but not in the request.
				continue
			}
			if data, ok := strings.CutPrefix(b.Signature, redactedPrefix); ok {
				content = append(content, redactedThinkingBlock{Type: "redacted_thinking", Data: data})
				continue
			}
			content = append(content, thinkingBlock{Type: "thinking", Thinking: b.Text, Signature: b.Signature})
		case llm.BlockToolCall:
			if role == "assistant" {
				content = append(content, toolUseBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: toolInput(b.Arguments)})
			}
		case llm.BlockToolResult:
			if role == "user" {
				content = append(content, toolResultBlock{Type: "tool_result", ToolUseID: b.CallID, Content: b.Content, IsError: b.IsError})
			}
		}
	}
	return role, content
}

// toolInput returns args when it is a JSON object, else {}.
func toolInput(args string) json.RawMessage {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return emptyObject
	}
	return json.RawMessage(args)
}

// resultsFirst moves tool_result blocks to the front, keeping order otherwise.
func resultsFirst(content []any) []any {
	out := make([]any, 0, len(content))
	for _, c := range content {
		if _, ok := c.(toolResultBlock); ok {
			out = append(out, c)
		}
	}
	for _, c := range content {
		if _, ok := c.(toolResultBlock); !ok {
			out = append(out, c)
		}
	}
	return out
}
