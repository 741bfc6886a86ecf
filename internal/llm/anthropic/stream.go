package anthropic

import (
	"encoding/json"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/wirejson"
)

// The stream events this adapter reads. Only the fields it uses are declared;
// one struct covers every event type so each event is decoded once.
type wireEvent struct {
	Type    string `json:"type"`
	Message *struct {
		Usage *wireUsage `json:"usage"`
	} `json:"message"`
	Index        *int         `json:"index"`
	ContentBlock *wireBlock   `json:"content_block"`
	Delta        *wireDelta   `json:"delta"`
	Usage        *wireUsage   `json:"usage"`
	Error        *wireErrBody `json:"error"`
}

// wireUsage fields are pointers: an absent count keeps the earlier value,
// a present zero replaces it.
type wireUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
}

type wireBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking string          `json:"thinking"`
	Data     string          `json:"data"`
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
}

type wireDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	PartialJSON string `json:"partial_json"`
	StopReason  string `json:"stop_reason"`
}

type wireErrBody struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// block is an open wire content block.
type block struct {
	index     int           // the adapter's index, in opening order
	kind      llm.BlockType // "" for a block type this adapter does not carry
	signature string        // accumulated signature_delta, emitted on block-end
	startArgs json.RawMessage
	args      bool // a non-empty input_json_delta arrived
}

// translator turns Anthropic stream events into llm chunks. It is pure: the
// HTTP side feeds it events and yields what it appends to out.
type translator struct {
	out        []llm.Chunk
	open       map[int]*block // wire index -> block
	next       int
	content    bool // some block carried content (docs/providers.md EMPTY_RESPONSE)
	stopReason string
	usage      llm.Usage
	logf       func(format string, args ...any)

	ev      wireEvent   // the event being fed (reused)
	scratch fastScratch // reused by fastEvent
}

func newTranslator(logf func(string, ...any)) *translator {
	return &translator{open: make(map[int]*block), logf: logf}
}

// feed applies one SSE event; data is valid only during the call. It
// returns the finish when the event ends the stream (message_stop, an error
// event, or data it cannot read).
func (t *translator) feed(name string, data []byte) *llm.Chunk {
	if name == "ping" {
		return nil
	}
	if name == "" && len(data) == 0 {
		return nil
	}
	ev := &t.ev
	*ev = wireEvent{}
	switch t.fastEvent(data, ev) {
	case wirejson.Invalid:
		return t.malformed(name, data)
	case wirejson.Fallback:
		*ev = wireEvent{}
		if err := json.Unmarshal(data, ev); err != nil {
			return t.malformed(name, data)
		}
	}
	if name == "" {
		// The event name is authoritative; a stream that omits it still
		// names the type in the payload.
		name = ev.Type
	}
	switch name {
	case "message_start":
		if ev.Message != nil && ev.Message.Usage != nil {
			t.mergeUsage(ev.Message.Usage)
			t.emitUsage()
		}
	case "content_block_start":
		if ev.Index == nil || ev.ContentBlock == nil {
			return t.malformed(name, data)
		}
		return t.start(*ev.Index, ev.ContentBlock, name, data)
	case "content_block_delta":
		if ev.Index == nil || ev.Delta == nil {
			return t.malformed(name, data)
		}
		return t.delta(*ev.Index, ev.Delta, name, data)
	case "content_block_stop":
		if ev.Index == nil {
			return t.malformed(name, data)
		}
		return t.stop(*ev.Index, name, data)
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != "" {
			t.stopReason = ev.Delta.StopReason
		}
		if ev.Usage != nil {
			t.mergeUsage(ev.Usage)
			t.emitUsage()
		}
	case "message_stop":
		f := t.finish()
		return &f
	case "error":
		if ev.Error == nil {
			return t.malformed(name, data)
		}
		f := t.streamError(ev.Error)
		return &f
	}
	// Unknown events are ignored: Anthropic documents that new event types
	// may appear and clients should skip them.
	return nil
}

func (t *translator) start(wi int, wb *wireBlock, name string, data []byte) *llm.Chunk {
	if _, dup := t.open[wi]; dup {
		return t.malformed(name, data)
	}
	b := &block{}
	t.open[wi] = b
	var start llm.Block
	switch wb.Type {
	case "text":
		start = llm.Block{Type: llm.BlockText}
	case "thinking":
		start = llm.Block{Type: llm.BlockReasoning}
	case "redacted_thinking":
		start = llm.Block{Type: llm.BlockReasoning}
		b.signature = redactedPrefix + wb.Data
		t.content = true
	case "tool_use":
		start = llm.Block{Type: llm.BlockToolCall, ID: wb.ID, Name: wb.Name}
		b.startArgs = wb.Input
		t.content = true
	default:
		// Server tool blocks and future types have no llm.Block shape; their
		// deltas are skipped.
		return nil
	}
	b.kind = start.Type
	b.index = t.next
	t.next++
	t.out = append(t.out, llm.Chunk{Type: llm.ChunkBlockStart, Index: b.index, Block: &start})
	switch wb.Type {
	case "text":
		t.text(b, llm.ChunkTextDelta, wb.Text)
	case "thinking":
		t.text(b, llm.ChunkReasoningDelta, wb.Thinking)
	}
	return nil
}

func (t *translator) text(b *block, typ llm.ChunkType, s string) {
	if s == "" {
		return
	}
	t.content = true
	t.out = append(t.out, llm.Chunk{Type: typ, Index: b.index, Delta: s})
}

func (t *translator) delta(wi int, d *wireDelta, name string, data []byte) *llm.Chunk {
	b, ok := t.open[wi]
	if !ok {
		return t.malformed(name, data)
	}
	if b.kind == "" {
		return nil
	}
	var want llm.BlockType
	switch d.Type {
	case "text_delta":
		want = llm.BlockText
	case "thinking_delta", "signature_delta":
		want = llm.BlockReasoning
	case "input_json_delta":
		want = llm.BlockToolCall
	default:
		// citations_delta and future delta types carry nothing we keep.
		return nil
	}
	if b.kind != want {
		return t.malformed(name, data)
	}
	switch d.Type {
	case "text_delta":
		t.text(b, llm.ChunkTextDelta, d.Text)
	case "thinking_delta":
		t.text(b, llm.ChunkReasoningDelta, d.Thinking)
	case "signature_delta":
		b.signature += d.Signature
		if d.Signature != "" {
			t.content = true
		}
	case "input_json_delta":
		if d.PartialJSON != "" {
			b.args = true
			t.out = append(t.out, llm.Chunk{Type: llm.ChunkToolCallDelta, Index: b.index, Delta: d.PartialJSON})
		}
	}
	return nil
}

func (t *translator) stop(wi int, name string, data []byte) *llm.Chunk {
	b, ok := t.open[wi]
	if !ok {
		return t.malformed(name, data)
	}
	delete(t.open, wi)
	if b.kind == "" {
		return nil
	}
	if b.kind == llm.BlockToolCall && !b.args {
		// A call without input deltas (a tool with no parameters) still
		// gets JSON arguments: the start's input, normally {}.
		args := string(b.startArgs)
		if args == "" || args == "null" {
			args = "{}"
		}
		t.out = append(t.out, llm.Chunk{Type: llm.ChunkToolCallDelta, Index: b.index, Delta: args})
	}
	t.out = append(t.out, llm.Chunk{Type: llm.ChunkBlockEnd, Index: b.index, Signature: b.signature})
	return nil
}

// mergeUsage keeps the latest reported counts: message_start reports input,
// message_delta the cumulative output (and, in newer API versions, input).
// Anthropic's input_tokens excludes cache reads and writes, which are
// reported apart.
func (t *translator) mergeUsage(u *wireUsage) {
	if u.InputTokens != nil {
		t.usage.InputTokens = *u.InputTokens
	}
	if u.OutputTokens != nil {
		t.usage.OutputTokens = *u.OutputTokens
	}
	if u.CacheReadInputTokens != nil {
		t.usage.CacheReadTokens = *u.CacheReadInputTokens
	}
	if u.CacheCreationInputTokens != nil {
		t.usage.CacheWriteTokens = *u.CacheCreationInputTokens
	}
}

func (t *translator) emitUsage() {
	if t.usage.IsZero() {
		return
	}
	u := t.usage
	// llm.Usage counts input like the OpenAI wire: cache reads and writes
	// included in InputTokens and also shown apart.
	u.InputTokens += u.CacheReadTokens + u.CacheWriteTokens
	t.out = append(t.out, llm.Chunk{Type: llm.ChunkUsage, Usage: &u})
}

// finish maps the stop reason at message_stop (docs/providers.md).
func (t *translator) finish() llm.Chunk {
	done := func(k llm.FinishKind) llm.Chunk {
		return llm.Chunk{Type: llm.ChunkFinish, Finish: &llm.Finish{Kind: k}}
	}
	switch t.stopReason {
	case "model_context_window_exceeded":
		// Checked before emptiness: it is the more actionable code.
		return llm.ErrorFinish(llm.CodeContextWindowExceeded, "prompt exceeds the model's context window")
	case "end_turn", "stop_sequence", "":
		if !t.content {
			return llm.ErrorFinish(llm.CodeEmptyResponse, "model returned no content")
		}
		return done(llm.FinishStop)
	case "tool_use":
		return done(llm.FinishToolCalls)
	case "max_tokens":
		return done(llm.FinishMaxTokens)
	case "refusal":
		return done(llm.FinishRefusal)
	case "pause_turn":
		return done(llm.FinishPause)
	}
	if t.logf != nil {
		t.logf("anthropic: unknown stop reason %q", t.stopReason)
	}
	return llm.ErrorFinish(reasonCode(t.stopReason), "model stopped for an unrecognised reason")
}

// reasonCode is llm.ReasonCode: the one normaliser of an unrecognised
// reason into a failure code, the same on both wires.
func reasonCode(reason string) llm.Code { return llm.ReasonCode(reason) }

// streamError classifies an in-stream error event. Its message is logged,
// never put into the finish.
func (t *translator) streamError(e *wireErrBody) llm.Chunk {
	if t.logf != nil {
		t.logf("anthropic: stream error %s: %s", e.Type, e.Message)
	}
	switch e.Type {
	case "overloaded_error":
		return llm.ErrorFinish(llm.CodeServer, "provider is overloaded")
	case "api_error", "timeout_error":
		return llm.ErrorFinish(llm.CodeServer, "provider reported an internal error")
	case "rate_limit_error":
		return llm.ErrorFinish(llm.CodeRateLimit, "provider rate limit reached")
	case "authentication_error", "permission_error":
		return llm.ErrorFinish(llm.CodeAuth, "provider rejected the credentials")
	case "billing_error":
		return llm.ErrorFinish(llm.CodeQuota, "quota or balance exhausted")
	case "invalid_request_error", "request_too_large", "not_found_error":
		if llm.IsContextWindowMessage(e.Message) {
			return llm.ErrorFinish(llm.CodeContextWindowExceeded, "prompt exceeds the model's context window")
		}
		return llm.ErrorFinish(llm.CodeInvalidRequest, "provider rejected the request")
	}
	return llm.ErrorFinish(llm.CodeServer, "provider reported an error")
}

// malformed ends the stream: the payload is not the JSON this wire promises.
func (t *translator) malformed(name string, data []byte) *llm.Chunk {
	if t.logf != nil {
		const limit = 256
		more := ""
		if len(data) > limit {
			data, more = data[:limit], "..."
		}
		t.logf("anthropic: malformed %q event: %s%s", name, data, more)
	}
	c := llm.ErrorFinish(llm.CodeMalformedResponse, "provider sent an unreadable stream event")
	return &c
}
