package responses

import (
	"bytes"
	"encoding/json"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/enccache"
)

// Request wire structs: only the fields reins sends.

type request struct {
	Model           string          `json:"model"`
	Instructions    string          `json:"instructions,omitempty"`
	Input           []inputItem     `json:"input"`
	Stream          bool            `json:"stream"`
	Store           bool            `json:"store"`
	Include         []string        `json:"include,omitempty"`
	MaxOutputTokens int             `json:"max_output_tokens,omitempty"`
	Reasoning       *reasoningParam `json:"reasoning,omitempty"`
}

type reasoningParam struct {
	Effort  llm.Effort `json:"effort,omitempty"`
	Summary string     `json:"summary,omitempty"`
}

// inputItem is one item of the input list: a message, a reasoning item, a
// function call or a function call's output. Only the fields of its Type
// are set.
type inputItem struct {
	Type string `json:"type"`
	// message
	Role    string        `json:"role,omitempty"`
	Content []contentPart `json:"content,omitempty"`
	// reasoning
	Summary          *[]contentPart `json:"summary,omitempty"`
	EncryptedContent string         `json:"encrypted_content,omitempty"`
	// function_call and function_call_output
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
	// Output is a function call's output: its text, or with an image
	// a list of outputParts.
	Output any `json:"output,omitempty"`
}

// outputPart is a part of a function_call_output's list output: an
// input_text or an input_image (a data URL).
type outputPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
	Detail   string `json:"detail,omitempty"`
}

type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// encodeRequest renders req as a stateless streaming Responses request:
// the system prompt as instructions, the history as input items, and
// `include: ["reasoning.encrypted_content"]` so reasoning can be handed
// back on the next step without server-side storage. The tools come last,
// from cache when it holds them (nil: encoded each time).
func encodeRequest(req *llm.Request, effort llm.Effort, cache *enccache.Tools) ([]byte, error) {
	r := request{
		Model: req.Model, Instructions: req.System, Stream: true,
		Include: []string{"reasoning.encrypted_content"}, MaxOutputTokens: req.MaxTokens,
		Input: make([]inputItem, 0, len(req.Messages)),
	}
	if effort != "" {
		r.Reasoning = &reasoningParam{Effort: effort, Summary: "auto"}
	}
	for _, m := range req.Messages {
		r.Input = appendItems(req, r.Input, m)
	}
	body, err := encode(r)
	if err != nil || len(req.Tools) == 0 {
		return body, err
	}
	if cache == nil {
		cache = new(enccache.Tools)
	}
	tools, err := cache.Get(req.Tools, encodeTools)
	if err != nil {
		return nil, err
	}
	// body is an object: its closing brace makes way for the tools.
	body = append(body[:len(body)-1], `,"tools":`...)
	body = append(body, tools...)
	return append(body, '}'), nil
}

// encodeTools renders the tools array.
func encodeTools(specs []llm.ToolSpec) ([]byte, error) {
	ts := make([]tool, 0, len(specs))
	for _, t := range specs {
		ts = append(ts, tool{Type: "function", Name: t.Name, Description: t.Description, Parameters: t.Schema()})
	}
	return encode(ts)
}

// encode is json.Marshal without HTML escaping.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// appendItems appends the input items of m, in block order. Consecutive
// text blocks make one message item. A reasoning block goes back only
// with the encrypted content this wire gave it: without it the item
// names nothing the server can use.
func appendItems(req *llm.Request, out []inputItem, m llm.Message) []inputItem {
	role, textType := "user", "input_text"
	if m.Role == llm.RoleAssistant {
		role, textType = "assistant", "output_text"
	}
	var text []contentPart
	flush := func() {
		if len(text) > 0 {
			out = append(out, inputItem{Type: "message", Role: role, Content: text})
			text = nil
		}
	}
	for _, b := range m.Content {
		switch b.Type {
		case llm.BlockText:
			if m.Role == llm.RoleTool {
				continue
			}
			text = append(text, contentPart{Type: textType, Text: b.Text})
		case llm.BlockReasoning:
			if m.Role != llm.RoleAssistant || b.Signature == "" {
				continue
			}
			flush()
			summary := []contentPart{}
			if b.Text != "" {
				summary = append(summary, contentPart{Type: "summary_text", Text: b.Text})
			}
			out = append(out, inputItem{Type: "reasoning", Summary: &summary, EncryptedContent: b.Signature})
		case llm.BlockToolCall:
			flush()
			args := b.Arguments
			if args == "" {
				args = "{}"
			}
			out = append(out, inputItem{Type: "function_call", CallID: b.ID, Name: b.Name, Arguments: &args})
		case llm.BlockToolResult:
			flush()
			out = append(out, inputItem{Type: "function_call_output", CallID: b.CallID, Output: callOutput(req, b)})
		}
	}
	flush()
	return out
}

// callOutput is the output of tool result b: its text, or, when the model
// is shown its image (llm.ResultParts), the text as input_text and the
// image as an input_image data URL, the list form the Responses API takes
// in a function_call_output.
func callOutput(req *llm.Request, b llm.Block) any {
	text, img := llm.ResultParts(req, b)
	if img == nil {
		return text
	}
	parts := make([]outputPart, 0, 2)
	if text != "" {
		parts = append(parts, outputPart{Type: "input_text", Text: text})
	}
	return append(parts, outputPart{Type: "input_image", ImageURL: img.DataURL(), Detail: "auto"})
}
