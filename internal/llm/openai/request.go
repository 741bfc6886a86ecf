package openai

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/reinsdev/reins/internal/jsonw"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/enccache"
)

// Request wire structs: only the fields reins sends.

type chatMessage struct {
	Role string `json:"role"`
	// Content is a *string, so an assistant message that only calls tools
	// sends an explicit null, which every compatible server accepts, or
	// a user message's []chatPart (text and images).
	Content          any            `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
}

// chatPart is a part of a user message's content: text, or an image_url
// (a data URL).
type chatPart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *chatImageURL `json:"image_url,omitempty"`
}

type chatImageURL struct {
	URL string `json:"url"`
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

// encoded is a request body and what the next request needs to extend
// it in place.
type encoded struct {
	body   []byte
	msgEnd int    // len(body) up to the end of the last message
	gen    uint64 // the enccache request its messages came from
}

// kept is the body of the latest request the transport sent whole: the
// next request of the session, which repeats every message of it and adds
// one or two, appends to its bytes in place instead of copying them.
type kept struct {
	mu    sync.Mutex
	e     *encoded
	tools enccache.Tools // the tools array, encoded once for the steps that repeat it
}

// take hands the kept body to one request (nil when there is none).
func (k *kept) take() *encoded {
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.e
	k.e = nil
	return e
}

func (k *kept) put(e *encoded) {
	k.mu.Lock()
	k.e = e
	k.mu.Unlock()
}

// encodeTools renders the tools array, as json.Marshal of []chatTool
// would (TestEncodeToolsMatchesMarshal), by hand: encoding/json would
// build its encoders for the types and compact every schema first
// (llm.ToolSpec.AppendSchema).
func encodeTools(specs []llm.ToolSpec) ([]byte, error) {
	return llm.AppendTools(specs, `{"type":"function","function":{"name":`, "}}", true)
}

// appendJSON appends m as json.Marshal would (TestChatMessageMatchesMarshal),
// by hand for the reason encodeTools gives.
func (m chatMessage) appendJSON(dst []byte) []byte {
	o := jsonw.Object{B: dst}
	o.String("role", m.Role)
	o.Key("content")
	switch c := m.Content.(type) {
	case nil:
		o.B = append(o.B, "null"...)
	case *string:
		if c == nil {
			o.B = append(o.B, "null"...)
		} else {
			o.B = jsonw.String(o.B, *c)
		}
	case []chatPart:
		o.B = jsonw.Array(o.B, c, func(dst []byte, p chatPart) []byte {
			po := jsonw.Object{B: dst}
			po.String("type", p.Type)
			po.OmitString("text", p.Text)
			if p.ImageURL != nil {
				po.Key("image_url")
				u := jsonw.Object{B: po.B}
				u.String("url", p.ImageURL.URL)
				po.B = u.End()
			}
			return po.End()
		})
	default: // not a content reins sends
		b, _ := json.Marshal(c)
		o.B = append(o.B, b...)
	}
	o.OmitString("reasoning_content", m.ReasoningContent)
	if len(m.ToolCalls) > 0 {
		o.Key("tool_calls")
		o.B = jsonw.Array(o.B, m.ToolCalls, func(dst []byte, tc chatToolCall) []byte {
			co := jsonw.Object{B: dst}
			co.String("id", tc.ID)
			co.String("type", tc.Type)
			co.Key("function")
			f := jsonw.Object{B: co.B}
			f.String("name", tc.Function.Name)
			f.String("arguments", tc.Function.Arguments)
			co.B = f.End()
			return co.End()
		})
	}
	o.OmitString("tool_call_id", m.ToolCallID)
	return o.End()
}

// encodeRequest renders req as a streaming chat-completions body. With
// deepseek set, assistant reasoning is sent back as reasoning_content, which
// DeepSeek requires on assistant messages of tool-call turns.
//
// The body is written so that a request extending the previous one starts
// with the previous one's bytes: the providers' automatic prompt caches
// (OpenAI, DeepSeek) match on an exact prefix. Each history message is
// encoded once (cache, when set) and its bytes reused; when the previous
// request's body is kept (keep, when set) and this request repeats its
// model, system prompt and every message, the new messages are appended to
// those bytes in place.
func encodeRequest(req *llm.Request, deepseek bool, cache *enccache.Cache[[]byte], keep *kept) (*encoded, error) {
	if cache == nil {
		cache = &enccache.Cache[[]byte]{}
	}
	if keep == nil {
		keep = &kept{}
	}
	encode := func(m llm.Message) []byte {
		var buf []byte
		for i, cm := range appendMessage(req, nil, m, deepseek) {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = cm.appendJSON(buf)
		}
		return buf
	}
	r := cache.Begin()
	msgs := make([][]byte, 0, len(req.Messages))
	for _, m := range req.Messages {
		msgs = append(msgs, r.Get(m, encode))
	}
	r.Done()
	var tools []byte
	if len(req.Tools) > 0 {
		var err error
		if tools, err = keep.tools.Get(req.Tools, encodeTools); err != nil {
			return nil, err
		}
	}
	head := jsonw.String([]byte(`{"model":`), req.Model)
	head = append(head, `,"messages":[`...)
	if req.System != "" {
		head = chatMessage{Role: "system", Content: ptr(req.System)}.appendJSON(head)
	}

	var buf []byte
	from := 0
	prev := keep.take()
	switch {
	case prev != nil && r.Extends(prev.gen) && bytes.HasPrefix(prev.body[:prev.msgEnd], head):
		buf, from = prev.body[:prev.msgEnd], r.PrevLen()
	default:
		size := len(head) + len(tools) + 128
		for _, b := range msgs {
			size += len(b) + 1
		}
		if prev != nil && cap(prev.body) >= size {
			buf = prev.body[:0]
		} else {
			buf = llm.BodyBuffer(size)
		}
		buf = append(buf, head...)
	}
	for _, b := range msgs[from:] {
		if len(b) == 0 {
			continue
		}
		if buf[len(buf)-1] != '[' {
			buf = append(buf, ',')
		}
		buf = append(buf, b...)
	}
	msgEnd := len(buf)
	buf = append(buf, `],"stream":true,"stream_options":{"include_usage":true}`...)
	if req.MaxTokens > 0 {
		buf = append(buf, `,"max_tokens":`...)
		buf = strconv.AppendInt(buf, int64(req.MaxTokens), 10)
	}
	if req.Effort != "" {
		buf = append(buf, `,"reasoning_effort":`...)
		buf = jsonw.String(buf, string(req.Effort))
	}
	if tools != nil {
		buf = append(buf, `,"tools":`...)
		buf = append(buf, tools...)
	}
	buf = append(buf, '}')
	return &encoded{body: buf, msgEnd: msgEnd, gen: r.Gen()}, nil
}

// appendMessage appends the wire messages for m. Tool results become one
// role "tool" message each, whatever role carried them, and come before any
// text of the same message: the wire wants them right after the assistant
// message that made the calls. A tool message takes only text, so the
// images of the results (llm.ResultParts) follow the tool messages in one
// user message, each named by the call it came from.
func appendMessage(req *llm.Request, out []chatMessage, m llm.Message, deepseek bool) []chatMessage {
	var text, reasoning strings.Builder
	var calls []chatToolCall
	var images []chatPart
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
			content, img := llm.ResultParts(req, b)
			out = append(out, chatMessage{Role: "tool", ToolCallID: b.CallID, Content: ptr(content)})
			results++
			if img != nil {
				images = append(images,
					chatPart{Type: "text", Text: "The image of tool call " + b.CallID + ":"},
					chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: img.DataURL()}})
			}
		}
	}
	if len(images) > 0 {
		out = append(out, chatMessage{Role: "user", Content: images})
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
