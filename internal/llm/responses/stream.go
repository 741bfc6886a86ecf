package responses

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/wirejson"
)

// Fixed finish messages: provider text never goes into a message.
const (
	msgEmpty      = "model returned no content"
	msgClosed     = "stream ended before response.completed"
	msgMalformed  = "stream payload is not the expected JSON"
	msgCW         = "provider reported in the stream: prompt exceeds the context window"
	msgFailed     = "provider reported the response failed"
	msgIncomplete = "response ended incomplete for an unrecognised reason"
)

// wireEvent is every stream event this adapter reads, in one struct so each
// event is decoded once.
type wireEvent struct {
	Type        string        `json:"type"`
	OutputIndex *int          `json:"output_index"`
	Delta       string        `json:"delta"`
	Arguments   string        `json:"arguments"`
	Item        *wireItem     `json:"item"`
	Response    *wireResponse `json:"response"`
	// The "error" event carries these at the top level.
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
}

type wireItem struct {
	Type             string     `json:"type"`
	CallID           string     `json:"call_id"`
	Name             string     `json:"name"`
	Arguments        string     `json:"arguments"`
	Content          []wirePart `json:"content"`
	Summary          []wirePart `json:"summary"`
	EncryptedContent string     `json:"encrypted_content"`
}

type wirePart struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	Refusal string `json:"refusal"`
}

type wireResponse struct {
	Status            string     `json:"status"`
	Usage             *wireUsage `json:"usage"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *wireError `json:"error"`
}

type wireError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type wireUsage struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	InputTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

func (u *wireUsage) usage() llm.Usage {
	out := llm.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
	if u.InputTokensDetails != nil {
		out.CacheReadTokens = u.InputTokensDetails.CachedTokens
	}
	if u.OutputTokensDetails != nil {
		out.ReasoningTokens = u.OutputTokensDetails.ReasoningTokens
	}
	return out
}

// item is one output item being streamed, keyed by its output_index.
type item struct {
	kind  llm.BlockType // "" for an item type this adapter does not carry
	index int           // the block's chunk index; -1 until opened
	id    string        // call_id of a function call
	name  string
	sent  bool // a delta of it was emitted
	done  bool
}

// translator turns Responses stream events into chunks. It is pure: the
// HTTP side (llm.SSEAttempt) feeds it events.
type translator struct {
	logf    func(string, ...any)
	out     []llm.Chunk
	items   map[int]*item
	next    int // index of the next block
	calls   int // function calls seen
	content bool
	events  int
	usage   *llm.Usage
	ev      wireEvent
	json    wirejson.Reader // fastEvent's, reused
}

func newTranslator(logf func(string, ...any)) *translator {
	return &translator{logf: logf, items: map[int]*item{}}
}

func (t *translator) log(format string, args ...any) {
	if t.logf != nil {
		t.logf(format, args...)
	}
}

// Feed implements llm.Translator.
func (t *translator) Feed(name string, data []byte, out []llm.Chunk) ([]llm.Chunk, *llm.Chunk) {
	t.out = out
	fin := t.feed(name, data)
	return t.out, fin
}

func (t *translator) feed(name string, data []byte) *llm.Chunk {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil // a named ping or an empty event
	}
	if bytes.Equal(trimmed, []byte("[DONE]")) {
		// Some compatible servers end with [DONE]; only the terminal
		// response event decides.
		return nil
	}
	t.events++
	ev := &t.ev
	*ev = wireEvent{}
	if trimmed[0] != '{' {
		return t.malformed(data)
	}
	switch t.fastEvent(data, ev) {
	case wirejson.Invalid:
		return t.malformed(data)
	case wirejson.Fallback:
		*ev = wireEvent{}
		if json.Unmarshal(data, ev) != nil {
			return t.malformed(data)
		}
	}
	typ := ev.Type
	if typ == "" {
		typ = name
	}
	switch typ {
	case "response.output_item.added":
		if ev.Item == nil || ev.OutputIndex == nil {
			return t.malformed(data)
		}
		t.open(*ev.OutputIndex, ev.Item)
	case "response.output_text.delta", "response.refusal.delta":
		return t.delta(ev, llm.BlockText, data)
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		return t.delta(ev, llm.BlockReasoning, data)
	case "response.function_call_arguments.delta":
		return t.delta(ev, llm.BlockToolCall, data)
	case "response.function_call_arguments.done":
		if ev.OutputIndex == nil {
			return t.malformed(data)
		}
		if it := t.items[*ev.OutputIndex]; it != nil && it.kind == llm.BlockToolCall && !it.sent && ev.Arguments != "" {
			t.emitDelta(it, ev.Arguments)
		}
	case "response.output_item.done":
		if ev.Item == nil || ev.OutputIndex == nil {
			return t.malformed(data)
		}
		t.itemDone(*ev.OutputIndex, ev.Item)
	case "response.completed", "response.incomplete", "response.failed":
		if ev.Response == nil {
			return t.malformed(data)
		}
		if ev.Response.Usage != nil {
			u := ev.Response.Usage.usage()
			t.usage = &u
		}
		f := t.terminal(typ, ev.Response)
		return &f
	case "error":
		f := t.errorFinish(codeString(ev.Code), ev.Message)
		return &f
	}
	// response.created, in_progress, content_part.*, *.done events and
	// future types carry nothing the output items do not.
	return nil
}

// codeString reads an error code sent as a string or a number.
func codeString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func kindOf(typ string) llm.BlockType {
	switch typ {
	case "message":
		return llm.BlockText
	case "reasoning":
		return llm.BlockReasoning
	case "function_call":
		return llm.BlockToolCall
	}
	return ""
}

// open registers an output item; its block opens with its first content
// (a function call's at once: its id and name are known).
func (t *translator) open(oi int, wi *wireItem) *item {
	if it, ok := t.items[oi]; ok {
		return it
	}
	it := &item{kind: kindOf(wi.Type), index: -1, id: wi.CallID, name: wi.Name}
	t.items[oi] = it
	if it.kind == llm.BlockToolCall {
		t.startBlock(it)
	}
	return it
}

func (t *translator) startBlock(it *item) {
	if it.index >= 0 || it.kind == "" {
		return
	}
	it.index = t.next
	t.next++
	b := llm.Block{Type: it.kind}
	if it.kind == llm.BlockToolCall {
		t.calls++
		if it.id == "" {
			it.id = "call_" + strconv.Itoa(t.calls-1)
		}
		b.ID, b.Name = it.id, it.name
	}
	t.content = true
	t.out = append(t.out, llm.Chunk{Type: llm.ChunkBlockStart, Index: it.index, Block: &b})
}

func (t *translator) delta(ev *wireEvent, kind llm.BlockType, data []byte) *llm.Chunk {
	if ev.OutputIndex == nil {
		return t.malformed(data)
	}
	it := t.items[*ev.OutputIndex]
	if it == nil {
		// A delta without its item.added: servers that stream bare
		// deltas still mean them as content of that kind.
		it = &item{kind: kind, index: -1}
		t.items[*ev.OutputIndex] = it
	}
	if it.kind != kind || it.done {
		if it.kind == "" {
			return nil
		}
		return t.malformed(data)
	}
	if ev.Delta == "" {
		return nil
	}
	t.emitDelta(it, ev.Delta)
	return nil
}

func (t *translator) emitDelta(it *item, s string) {
	t.startBlock(it)
	typ := llm.ChunkTextDelta
	switch it.kind {
	case llm.BlockReasoning:
		typ = llm.ChunkReasoningDelta
	case llm.BlockToolCall:
		typ = llm.ChunkToolCallDelta
	}
	it.sent = true
	t.out = append(t.out, llm.Chunk{Type: typ, Index: it.index, Delta: s})
}

// itemDone ends an item. What its deltas did not carry comes from the
// whole item (servers that send only the done item), and a reasoning
// item's encrypted content becomes the block's signature.
func (t *translator) itemDone(oi int, wi *wireItem) {
	it := t.open(oi, wi)
	if it.done || it.kind == "" {
		return
	}
	it.done = true
	var sig string
	switch it.kind {
	case llm.BlockText:
		if !it.sent {
			for _, p := range wi.Content {
				if s := p.Text + p.Refusal; s != "" {
					t.emitDelta(it, s)
				}
			}
		}
	case llm.BlockReasoning:
		if !it.sent {
			var parts []string
			for _, p := range wi.Summary {
				parts = append(parts, p.Text)
			}
			for _, p := range wi.Content { // reasoning_text of open models
				parts = append(parts, p.Text)
			}
			if s := strings.Join(parts, "\n\n"); s != "" {
				t.emitDelta(it, s)
			}
		}
		sig = wi.EncryptedContent
		if sig != "" {
			t.startBlock(it) // an opaque reasoning item is content
		}
	case llm.BlockToolCall:
		if !it.sent {
			args := wi.Arguments
			if args == "" {
				args = "{}"
			}
			t.emitDelta(it, args)
		}
	}
	if it.index >= 0 {
		t.out = append(t.out, llm.Chunk{Type: llm.ChunkBlockEnd, Index: it.index, Signature: sig})
	}
}

// closeOpen ends the blocks still open (in index order).
func (t *translator) closeOpen() {
	open := make([]*item, 0, len(t.items))
	for _, it := range t.items {
		if it.index >= 0 && !it.done {
			open = append(open, it)
		}
	}
	slices.SortFunc(open, func(a, b *item) int { return a.index - b.index })
	for _, it := range open {
		it.done = true
		t.out = append(t.out, llm.Chunk{Type: llm.ChunkBlockEnd, Index: it.index})
	}
}

func (t *translator) withUsage() {
	if t.usage != nil {
		t.out = append(t.out, llm.Chunk{Type: llm.ChunkUsage, Usage: t.usage})
	}
}

// terminal maps the terminal response event (docs/providers.md):
// completed is a stop, or tool-calls when the output called functions;
// incomplete for max_output_tokens is max-tokens and for content_filter a
// refusal; failed is classified by its error code.
func (t *translator) terminal(typ string, r *wireResponse) llm.Chunk {
	t.closeOpen()
	t.withUsage()
	done := func(k llm.FinishKind) llm.Chunk {
		return llm.Chunk{Type: llm.ChunkFinish, Finish: &llm.Finish{Kind: k}}
	}
	switch typ {
	case "response.failed":
		var e wireError
		if r.Error != nil {
			e = *r.Error
		}
		return t.errorFinish(e.Code, e.Message)
	case "response.incomplete":
		reason := ""
		if r.IncompleteDetails != nil {
			reason = r.IncompleteDetails.Reason
		}
		switch reason {
		case "max_output_tokens":
			return done(llm.FinishMaxTokens)
		case "content_filter":
			return done(llm.FinishRefusal)
		}
		t.log("responses: incomplete for reason %q", reason)
		return llm.Chunk{Type: llm.ChunkFinish, Finish: &llm.Finish{Kind: llm.FinishError, Code: llm.ReasonCode(reason), Message: msgIncomplete}}
	}
	if !t.content {
		return llm.ErrorFinish(llm.CodeEmptyResponse, msgEmpty)
	}
	if t.calls > 0 {
		return done(llm.FinishToolCalls)
	}
	return done(llm.FinishStop)
}

// errorFinish classifies a failure the server reported in the stream (an
// error event or response.failed) by its documented code; the message is
// consulted only for the context-window markers and goes to the host log.
func (t *translator) errorFinish(code, message string) llm.Chunk {
	t.log("responses: error in stream: code %q: %.65536s", code, message)
	switch {
	case code == "context_length_exceeded" || llm.IsContextWindowMessage(message):
		return llm.ErrorFinish(llm.CodeContextWindowExceeded, msgCW)
	case code == "rate_limit_exceeded":
		return llm.ErrorFinish(llm.CodeRateLimit, msgFailed+": rate limit")
	case code == "insufficient_quota":
		return llm.ErrorFinish(llm.CodeQuota, msgFailed+": quota or balance exhausted")
	case code == "invalid_prompt" || code == "invalid_request_error" || strings.HasPrefix(code, "invalid_"):
		return llm.ErrorFinish(llm.CodeInvalidRequest, msgFailed+": the request was rejected")
	}
	return llm.ErrorFinish(llm.CodeServer, msgFailed)
}

// Unfinished implements llm.Translator: the body ended before the terminal
// response event.
func (t *translator) Unfinished() string { return msgClosed }

func (t *translator) malformed(data []byte) *llm.Chunk {
	t.log("responses: malformed stream payload: %.4096s", data)
	c := llm.ErrorFinish(llm.CodeMalformedResponse, msgMalformed)
	return &c
}
