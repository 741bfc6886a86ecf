package responses

import (
	"encoding/json"

	"github.com/reinsdev/reins/internal/jsonw"
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
	size := 1024 + len(req.System)
	for _, m := range req.Messages {
		r.Input = appendItems(req, r.Input, m)
		for _, b := range m.Content {
			size += 64 + len(b.Text) + len(b.Signature) + len(b.Arguments) + len(b.Content)
			if b.Image != nil {
				size += len(b.Image.Data)*4/3 + 64
			}
		}
	}
	var tools []byte
	if len(req.Tools) > 0 {
		if cache == nil {
			cache = new(enccache.Tools)
		}
		var err error
		if tools, err = cache.Get(req.Tools, encodeTools); err != nil {
			return nil, err
		}
	}
	body := r.appendJSON(llm.BodyBuffer(size + len(tools)))
	if tools == nil {
		return body, nil
	}
	// body is an object: its closing brace makes way for the tools.
	body = append(body[:len(body)-1], `,"tools":`...)
	body = append(body, tools...)
	return append(body, '}'), nil
}

// encodeTools renders the tools array, as jsonw.MarshalNoHTML(ts []tool) would
// (TestEncodeMatchesEncoder), by hand: encoding/json would build its
// encoders for the types and compact every schema first
// (llm.ToolSpec.AppendSchema).
func encodeTools(specs []llm.ToolSpec) ([]byte, error) {
	return llm.AppendTools(specs, `{"type":"function","name":`, `,"strict":false}`, false)
}

// appendJSON appends r as encode would, by hand (see encodeTools).
func (r request) appendJSON(dst []byte) []byte {
	o := jsonw.Object{B: dst, NoHTML: true}
	o.String("model", r.Model)
	o.OmitString("instructions", r.Instructions)
	o.Key("input")
	o.B = jsonw.Array(o.B, r.Input, func(dst []byte, it inputItem) []byte { return it.appendJSON(dst) })
	o.Bool("stream", r.Stream)
	o.Bool("store", r.Store)
	if len(r.Include) > 0 {
		o.Key("include")
		o.B = jsonw.Array(o.B, r.Include, jsonw.StringNoHTML)
	}
	o.OmitInt("max_output_tokens", int64(r.MaxOutputTokens))
	if r.Reasoning != nil {
		o.Key("reasoning")
		ro := jsonw.Object{B: o.B, NoHTML: true}
		ro.OmitString("effort", string(r.Reasoning.Effort))
		ro.OmitString("summary", r.Reasoning.Summary)
		o.B = ro.End()
	}
	return o.End()
}

func (it inputItem) appendJSON(dst []byte) []byte {
	o := jsonw.Object{B: dst, NoHTML: true}
	o.String("type", it.Type)
	o.OmitString("role", it.Role)
	if len(it.Content) > 0 {
		o.Key("content")
		o.B = appendParts(o.B, it.Content)
	}
	if it.Summary != nil {
		o.Key("summary")
		o.B = appendParts(o.B, *it.Summary)
	}
	o.OmitString("encrypted_content", it.EncryptedContent)
	o.OmitString("call_id", it.CallID)
	o.OmitString("name", it.Name)
	if it.Arguments != nil {
		o.Key("arguments")
		o.B = jsonw.StringNoHTML(o.B, *it.Arguments)
	}
	switch out := it.Output.(type) {
	case nil:
	case string:
		o.Key("output")
		o.B = jsonw.StringNoHTML(o.B, out)
	case []outputPart:
		o.Key("output")
		o.B = jsonw.Array(o.B, out, func(dst []byte, p outputPart) []byte {
			po := jsonw.Object{B: dst, NoHTML: true}
			po.String("type", p.Type)
			po.OmitString("text", p.Text)
			po.OmitString("image_url", p.ImageURL)
			po.OmitString("detail", p.Detail)
			return po.End()
		})
	default: // not an output reins sends
		o.Key("output")
		b, _ := jsonw.MarshalNoHTML(out)
		o.B = append(o.B, b...)
	}
	return o.End()
}

// appendParts appends a list of content parts (null for nil).
func appendParts(dst []byte, ps []contentPart) []byte {
	return jsonw.Array(dst, ps, func(dst []byte, p contentPart) []byte {
		po := jsonw.Object{B: dst, NoHTML: true}
		po.String("type", p.Type)
		po.String("text", p.Text)
		return po.End()
	})
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
// is shown its image (llm.ResultContent), the text as input_text and the
// image as an input_image data URL, the list form the Responses API takes
// in a function_call_output.
func callOutput(req *llm.Request, b llm.Block) any {
	return llm.ResultContent(req, b,
		func(text string) outputPart { return outputPart{Type: "input_text", Text: text} },
		func(img *llm.Image) outputPart {
			return outputPart{Type: "input_image", ImageURL: img.DataURL(), Detail: "auto"}
		})
}
