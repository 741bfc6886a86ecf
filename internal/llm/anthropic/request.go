package anthropic

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/reinsdev/reins/internal/jsonw"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/enccache"
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
	// Content is the result's text, or with images a list of text and
	// image blocks.
	Content any  `json:"content"`
	IsError bool `json:"is_error"`
}

// imageBlock is an image in a tool result (base64 source).
type imageBlock struct {
	Type   string      `json:"type"`
	Source imageSource `json:"source"`
}

type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      []byte `json:"data"`
}

// resultContent is a tool result's wire content: its text alone, or with
// an image (llm.ResultContent) the text block followed by the image block.
func resultContent(req *llm.Request, b llm.Block) any {
	return llm.ResultContent(req, b,
		func(text string) any { return textBlock{Type: "text", Text: text} },
		func(img *llm.Image) any {
			return imageBlock{Type: "image", Source: imageSource{Type: "base64", MediaType: img.MediaType, Data: img.Data}}
		})
}

var errToolSchema = errors.New("anthropic: tool parameters are not valid JSON")

// MaxBreakpoints is the most cache_control marks a request may carry.
const MaxBreakpoints = 4

// cacheControl is the mark of a prompt-cache breakpoint.
const cacheControl = `"cache_control":{"type":"ephemeral"}`

// encodedMessage is one history message as wire content blocks, each
// encoded once (enccache) and reused by every later request.
type encodedMessage struct {
	role   string
	blocks []encodedBlock
}

type encodedBlock struct {
	json   []byte
	result bool // a tool_result, which goes first in its user message
}

// encodeRequest renders req as an Anthropic Messages request body, with
// prompt-cache breakpoints (at most MaxBreakpoints): the last tool, the
// system prompt, and the ends of the last two user messages — the end of
// this request's conversation, where the next request's cache read will
// start, and the end of the previous request's, where this one's starts.
// Messages come from cache when it is set.
func encodeRequest(req *llm.Request, cache *enccache.Cache[encodedMessage]) ([]byte, error) {
	tools := make([][]byte, 0, len(req.Tools))
	for _, t := range req.Tools {
		schema := t.Schema()
		if !json.Valid(schema) {
			return nil, errToolSchema
		}
		b, err := json.Marshal(wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
		if err != nil {
			return nil, err
		}
		tools = append(tools, b)
	}
	if cache == nil {
		cache = &enccache.Cache[encodedMessage]{}
	}
	r := cache.Begin()
	msgs := make([]encodedMessage, 0, len(req.Messages))
	for _, m := range req.Messages {
		msgs = append(msgs, r.Get(m, func(m llm.Message) encodedMessage { return encodeMessage(req, m) }))
	}
	r.Done()
	wire := mergeRoles(msgs)

	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	maxTokens += req.Effort.ThinkingBudget()
	size := 128 + len(req.Model) + len(req.System)
	for _, t := range tools {
		size += len(t) + 1
	}
	for _, m := range wire {
		size += 32
		for _, b := range m.blocks {
			size += len(b.json) + 1
		}
	}
	size += 2 * MaxBreakpoints * len(cacheControl)
	buf := llm.BodyBuffer(size)
	buf = append(buf, `{"model":`...)
	buf = jsonw.String(buf, req.Model)
	buf = append(buf, `,"max_tokens":`...)
	buf = strconv.AppendInt(buf, int64(maxTokens), 10)
	buf = append(buf, `,"stream":true`...)
	if b := req.Effort.ThinkingBudget(); b > 0 {
		// Extended thinking: max_tokens counts the thinking too, so it
		// was raised by the budget above.
		buf = append(buf, `,"thinking":{"type":"enabled","budget_tokens":`...)
		buf = strconv.AppendInt(buf, int64(b), 10)
		buf = append(buf, '}')
	}
	if req.System != "" {
		buf = append(buf, `,"system":[{"type":"text","text":`...)
		buf = jsonw.String(buf, req.System)
		buf = append(buf, ","+cacheControl+"}]"...)
	}
	if len(tools) > 0 {
		buf = append(buf, `,"tools":[`...)
		for i, t := range tools {
			if i > 0 {
				buf = append(buf, ',')
			}
			if i == len(tools)-1 {
				t = withCacheControl(t)
			}
			buf = append(buf, t...)
		}
		buf = append(buf, ']')
	}
	// The conversation's breakpoints: the ends of the last two user
	// messages (a user message never ends in a thinking block, which may
	// not carry one).
	marks := map[int]bool{}
	for i := len(wire) - 1; i >= 0 && len(marks) < 2; i-- {
		if wire[i].role == "user" {
			marks[i] = true
		}
	}
	buf = append(buf, `,"messages":[`...)
	for i, m := range wire {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"role":"`...)
		buf = append(buf, m.role...)
		buf = append(buf, `","content":[`...)
		for j, b := range m.blocks {
			if j > 0 {
				buf = append(buf, ',')
			}
			if marks[i] && j == len(m.blocks)-1 {
				buf = append(buf, withCacheControl(b.json)...)
				continue
			}
			buf = append(buf, b.json...)
		}
		buf = append(buf, "]}"...)
	}
	buf = append(buf, "]}"...)
	return buf, nil
}

// withCacheControl returns the JSON object b with the breakpoint mark
// added as its last member.
func withCacheControl(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(cacheControl)+1)
	out = append(out, b[:len(b)-1]...)
	return append(append(append(out, ','), cacheControl...), '}')
}

// encodeMessage encodes one history message's content blocks (req says
// whether images are sent).
func encodeMessage(req *llm.Request, m llm.Message) encodedMessage {
	role, content := wireContent(req, m)
	out := encodedMessage{role: role, blocks: make([]encodedBlock, 0, len(content))}
	for _, c := range content {
		b, err := json.Marshal(c)
		if err != nil { // the block types hold only strings, bools and valid JSON
			continue
		}
		_, isResult := c.(toolResultBlock)
		out.blocks = append(out.blocks, encodedBlock{json: b, result: isResult})
	}
	return out
}

// mergeRoles joins the history into wire messages. Tool results travel
// in user messages, and Anthropic requires strictly alternating roles with
// every result of an assistant turn in the one user message that follows
// it, so consecutive messages of the same wire role are merged and, within
// a user message, tool results are moved before any text.
func mergeRoles(msgs []encodedMessage) []encodedMessage {
	out := make([]encodedMessage, 0, len(msgs))
	for _, m := range msgs {
		if len(m.blocks) == 0 {
			// Anthropic rejects empty content; an assistant message holding
			// only unsigned reasoning has nothing it can send back.
			continue
		}
		if n := len(out); n > 0 && out[n-1].role == m.role {
			merged := append(append([]encodedBlock(nil), out[n-1].blocks...), m.blocks...)
			out[n-1].blocks = merged
			continue
		}
		out = append(out, m)
	}
	for i := range out {
		if out[i].role == "user" {
			out[i].blocks = resultsFirst(out[i].blocks)
		}
	}
	return out
}

func wireContent(req *llm.Request, m llm.Message) (role string, content []any) {
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
				content = append(content, toolResultBlock{Type: "tool_result", ToolUseID: b.CallID, Content: resultContent(req, b), IsError: b.IsError})
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

// resultsFirst moves tool_result blocks to the front, keeping order
// otherwise; it returns bs itself when they are there already.
func resultsFirst(bs []encodedBlock) []encodedBlock {
	sorted, seenOther := true, false
	for _, b := range bs {
		if !b.result {
			seenOther = true
		} else if seenOther {
			sorted = false
			break
		}
	}
	if sorted {
		return bs
	}
	out := make([]encodedBlock, 0, len(bs))
	for _, b := range bs {
		if b.result {
			out = append(out, b)
		}
	}
	for _, b := range bs {
		if !b.result {
			out = append(out, b)
		}
	}
	return out
}
