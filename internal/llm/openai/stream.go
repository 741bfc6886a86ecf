package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/sse"
	"github.com/reinsdev/reins/internal/llm/wirejson"
)

// maxEventSize bounds one SSE event: a line of llm.MaxLineBytes plus room
// for the JSON around the delta and the field name.
const maxEventSize = llm.MaxLineBytes + 1<<20

// Fixed finish messages: provider text never goes into a message.
const (
	msgEmpty       = "model returned no content"
	msgEmptyBody   = "provider returned an empty body"
	msgClosed      = "stream ended before [DONE]"
	msgMalformed   = "stream payload is not the expected JSON"
	msgNotSSE      = "response body is not an event stream"
	msgTooLong     = "stream event exceeds the size limit"
	msgStreamError = "provider reported an error in the stream"
	msgStreamCW    = "provider reported in the stream: prompt exceeds the context window"
	msgUnknown     = "provider ended with an unrecognised finish reason"
)

// Response wire structs: only the fields reins reads. A JSON null leaves a
// string empty, which is what an absent delta means.

type wireChunk struct {
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	// Error is kept raw: servers send an object or a bare string.
	Error json.RawMessage `json:"error"`
}

type wireChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason string    `json:"finish_reason"`
}

type wireDelta struct {
	Content          string         `json:"content"`
	ReasoningContent string         `json:"reasoning_content"` // DeepSeek, vLLM
	Reasoning        string         `json:"reasoning"`         // Ollama, OpenRouter
	Refusal          string         `json:"refusal"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
	// FunctionCall is the legacy single-call shape.
	FunctionCall *wireFunction `json:"function_call"`
}

type wireToolCall struct {
	// Index is a pointer because a few servers omit it; see decoder.toolCall.
	Index    *int         `json:"index"`
	ID       string       `json:"id"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireUsage struct {
	PromptTokens         int `json:"prompt_tokens"`
	CompletionTokens     int `json:"completion_tokens"`
	PromptCacheHitTokens int `json:"prompt_cache_hit_tokens"` // DeepSeek
	PromptTokensDetails  *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (u *wireUsage) usage() llm.Usage {
	out := llm.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.CacheReadTokens = u.PromptTokensDetails.CachedTokens
	}
	if out.CacheReadTokens == 0 {
		out.CacheReadTokens = u.PromptCacheHitTokens
	}
	if u.CompletionTokensDetails != nil {
		out.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
	}
	return out
}

// toolCall is one tool call being assembled from deltas.
type toolCall struct {
	id, name string
	pending  strings.Builder // arguments that arrived before the block opened
	block    int             // chunk index; -1 until opened
	seq      int             // position among the response's calls
}

// decoder turns one response body into chunks. It is used once, from one
// goroutine.
type decoder struct {
	yield func(llm.Chunk) bool
	logf  func(format string, args ...any)
	// progress is told every chunk, for the no-progress watchdog (nil: none).
	progress func(llm.Chunk)

	stopped bool // the consumer broke out of the loop
	next    int  // index of the next block to open
	open    []int

	// The open text or reasoning block, if any (cur < 0: none).
	cur     int
	curKind llm.BlockType

	calls   []*toolCall
	byIndex map[int]*toolCall
	last    *toolCall

	events int // data events seen
	reason string
	usage  *llm.Usage

	chunk   wireChunk       // the payload being decoded (reused)
	json    wirejson.Reader // reused by fastChunk
	choices []wireChoice    // reused by fastChunk
}

// run reads body to the end of the response and emits the finish.
func (d *decoder) run(call *llm.Call, body io.Reader) {
	d.cur = -1
	sn := &sniffer{r: call.Body(body)}
	var readErr error
	events := sse.NewReader(sn, maxEventSize)
	for {
		ev, err := events.Next()
		if err != nil {
			if err != io.EOF {
				readErr = err
			}
			break
		}
		if call.Context().Err() != nil {
			// The caller cancelled or the watchdog fired while complete
			// events were still buffered: stop yielding content.
			d.finish(call.Fail(call.Context().Err()))
			return
		}
		if len(ev.Data) == 0 {
			continue // an event with no data, e.g. a named ping
		}
		d.events++
		sn.off = true
		if bytes.Equal(bytes.TrimSpace(ev.Data), doneMarker) {
			d.done()
			return
		}
		if !d.payload(ev.Type, ev.Data) {
			return
		}
	}

	// The body ended without [DONE].
	sn.end()
	switch {
	case readErr == nil:
		switch {
		case d.events > 0 || sn.sawData:
			d.finish(llm.ErrorFinish(llm.CodeStreamClosed, msgClosed))
		case sn.foreign:
			d.finish(llm.ErrorFinish(llm.CodeMalformedResponse, msgNotSSE))
		default:
			d.finish(llm.ErrorFinish(llm.CodeEmptyResponse, msgEmptyBody))
		}
	case call.Context().Err() != nil:
		d.finish(call.Fail(readErr))
	case errors.Is(readErr, io.ErrUnexpectedEOF):
		d.finish(llm.ErrorFinish(llm.CodeStreamClosed, msgClosed))
	case errors.Is(readErr, bufio.ErrTooLong):
		d.finish(llm.ErrorFinish(llm.CodeMalformedResponse, msgTooLong))
	default:
		d.finish(call.Fail(readErr))
	}
}

var doneMarker = []byte("[DONE]")

// payload handles one data payload (valid only during the call); false
// means the stream is over.
func (d *decoder) payload(kind string, data []byte) bool {
	if kind == "error" {
		// A named error event (some proxies) rather than an error field.
		return d.streamError(string(data))
	}
	ch := &d.chunk
	*ch = wireChunk{}
	// An object is required: JSON null, arrays and numbers decode without
	// error into a struct but are not a chunk.
	t := bytes.TrimLeft(data, " \t\r\n")
	ok := len(t) > 0 && t[0] == '{'
	if ok {
		switch d.fastChunk(data, ch) {
		case wirejson.Invalid:
			ok = false
		case wirejson.Fallback:
			*ch = wireChunk{}
			ok = json.Unmarshal(data, ch) == nil
		}
	}
	if !ok {
		d.logf("openai: malformed stream payload: %.4096s", data)
		d.finish(llm.ErrorFinish(llm.CodeMalformedResponse, msgMalformed))
		return false
	}
	if len(ch.Error) > 0 && string(ch.Error) != "null" {
		return d.streamError(string(ch.Error))
	}
	if ch.Usage != nil {
		u := ch.Usage.usage()
		d.usage = &u
	}
	for i := range ch.Choices {
		c := &ch.Choices[i]
		if c.Index != 0 {
			continue // reins asks for one choice
		}
		if !d.delta(&c.Delta) {
			return false
		}
		if c.FinishReason != "" {
			d.reason = c.FinishReason
		}
	}
	return true
}

// streamError ends the stream on an error the server reported inside it,
// classified by the same markers as an HTTP error body; false always.
func (d *decoder) streamError(raw string) bool {
	d.logf("openai: error in stream: %.65536s", raw)
	if llm.IsContextWindowMessage(raw) {
		d.finish(llm.ErrorFinish(llm.CodeContextWindowExceeded, msgStreamCW))
	} else {
		d.finish(llm.ErrorFinish(llm.CodeServer, msgStreamError))
	}
	return false
}

func (d *decoder) delta(w *wireDelta) bool {
	// Servers migrating between the two reasoning spellings send both,
	// with the same text: take one.
	reasoning := w.ReasoningContent
	if reasoning == "" {
		reasoning = w.Reasoning
	}
	if !d.text(llm.BlockReasoning, reasoning) ||
		!d.text(llm.BlockText, w.Content) ||
		!d.text(llm.BlockText, w.Refusal) {
		return false
	}
	if w.FunctionCall != nil {
		zero := 0
		if !d.toolDelta(&wireToolCall{Index: &zero, Function: *w.FunctionCall}) {
			return false
		}
	}
	for i := range w.ToolCalls {
		if !d.toolDelta(&w.ToolCalls[i]) {
			return false
		}
	}
	return true
}

// text appends s to the open block of kind, ending a block of the other
// kind and opening a new one as needed.
func (d *decoder) text(kind llm.BlockType, s string) bool {
	if s == "" {
		return true
	}
	if d.cur < 0 || d.curKind != kind {
		if !d.endCur() {
			return false
		}
		d.cur, d.curKind = d.start(llm.Block{Type: kind}), kind
		if d.stopped {
			return false
		}
	}
	t := llm.ChunkTextDelta
	if kind == llm.BlockReasoning {
		t = llm.ChunkReasoningDelta
	}
	return d.emit(llm.Chunk{Type: t, Index: d.cur, Delta: s})
}

// toolDelta merges one tool-call delta. Calls are keyed by the wire index;
// a new id under an index already holding another call starts a new call
// (servers that send every call at index 0), and a delta without an index
// continues the last call unless its id is new.
func (d *decoder) toolDelta(w *wireToolCall) bool {
	if d.cur >= 0 && !d.endCur() {
		return false
	}
	var tc *toolCall
	if w.Index != nil {
		tc = d.byIndex[*w.Index]
	} else {
		tc = d.last
	}
	if tc == nil || (w.ID != "" && tc.id != "" && w.ID != tc.id) {
		tc = &toolCall{block: -1, seq: len(d.calls)}
		d.calls = append(d.calls, tc)
		if w.Index != nil {
			if d.byIndex == nil {
				d.byIndex = make(map[int]*toolCall)
			}
			d.byIndex[*w.Index] = tc
		}
	}
	d.last = tc

	if tc.block < 0 {
		if tc.id == "" {
			tc.id = w.ID
		}
		tc.name += w.Function.Name
		tc.pending.WriteString(w.Function.Arguments)
		if tc.name == "" {
			return true // wait for the name before opening the block
		}
		return d.openCall(tc)
	}
	if w.Function.Arguments == "" {
		return true
	}
	return d.emit(llm.Chunk{Type: llm.ChunkToolCallDelta, Index: tc.block, Delta: w.Function.Arguments})
}

func (d *decoder) openCall(tc *toolCall) bool {
	if tc.id == "" {
		// Some local servers send no id; the tool result must still
		// name its call.
		tc.id = fmt.Sprintf("call_%d", tc.seq)
	}
	tc.block = d.start(llm.Block{Type: llm.BlockToolCall, ID: tc.id, Name: tc.name})
	if d.stopped {
		return false
	}
	if tc.pending.Len() > 0 {
		args := tc.pending.String()
		tc.pending.Reset()
		return d.emit(llm.Chunk{Type: llm.ChunkToolCallDelta, Index: tc.block, Delta: args})
	}
	return true
}

// start opens a block and returns its index.
func (d *decoder) start(b llm.Block) int {
	i := d.next
	d.next++
	d.open = append(d.open, i)
	d.emit(llm.Chunk{Type: llm.ChunkBlockStart, Index: i, Block: &b})
	return i
}

// endCur ends the open text or reasoning block, if any.
func (d *decoder) endCur() bool {
	if d.cur < 0 {
		return true
	}
	i := d.cur
	d.cur = -1
	for k, j := range d.open {
		if j == i {
			d.open = append(d.open[:k], d.open[k+1:]...)
			break
		}
	}
	return d.emit(llm.Chunk{Type: llm.ChunkBlockEnd, Index: i})
}

// done handles [DONE]: the stream completed, so its finish reason decides.
func (d *decoder) done() {
	// A call that never got a name still carried something: open it so the
	// loop sees (and can reject) it rather than losing it silently.
	for _, tc := range d.calls {
		if tc.block < 0 && !d.openCall(tc) {
			return
		}
	}
	var f llm.Finish
	switch d.reason {
	case "", "stop", "tool_calls", "function_call":
		// No text, no reasoning and no tool call is not an answer,
		// whatever the finish reason claims (docs/subagents.md, "Empty
		// answers").
		if d.next == 0 {
			d.finish(llm.ErrorFinish(llm.CodeEmptyResponse, msgEmpty))
			return
		}
	}
	switch d.reason {
	case "", "stop":
		f.Kind = llm.FinishStop
	case "tool_calls", "function_call":
		f.Kind = llm.FinishToolCalls
	case "length":
		f.Kind = llm.FinishMaxTokens
	case "content_filter":
		f.Kind = llm.FinishRefusal
	default:
		f = llm.Finish{Kind: llm.FinishError, Code: reasonCode(d.reason), Message: msgUnknown}
	}
	d.finish(llm.Chunk{Type: llm.ChunkFinish, Finish: &f})
}

// finish ends the open blocks, reports usage and emits the finish chunk.
func (d *decoder) finish(fin llm.Chunk) {
	if d.stopped {
		return
	}
	d.cur = -1
	for _, i := range d.open {
		if !d.emit(llm.Chunk{Type: llm.ChunkBlockEnd, Index: i}) {
			return
		}
	}
	d.open = nil
	if d.usage != nil && !d.emit(llm.Chunk{Type: llm.ChunkUsage, Usage: d.usage}) {
		return
	}
	d.emit(fin)
}

func (d *decoder) emit(c llm.Chunk) bool {
	if d.stopped {
		return false
	}
	if d.progress != nil {
		d.progress(c)
	}
	if !d.yield(c) {
		d.stopped = true
		return false
	}
	return true
}

// reasonCode is llm.ReasonCode: the one normaliser of an unrecognised
// reason into a failure code, the same on both wires.
func reasonCode(reason string) llm.Code { return llm.ReasonCode(reason) }

// sniffer watches the raw body until the first data event, so that a body
// that ended with no event can be told apart: nothing (or only comments) is
// an empty response, an unfinished data line is a cut stream, and lines that
// are no SSE field at all mean the server did not send an event stream.
type sniffer struct {
	r   io.Reader
	off bool // set once an event arrived: nothing left to learn

	head    []byte // first bytes of the current line
	inLine  bool
	decided bool

	sawData, foreign bool
}

func (s *sniffer) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if !s.off {
		s.scan(p[:n])
	}
	return n, err
}

func (s *sniffer) scan(p []byte) {
	for _, c := range p {
		switch {
		case c == '\n' || c == '\r':
			if s.inLine && !s.decided {
				s.classify()
			}
			s.inLine, s.decided, s.head = false, false, s.head[:0]
		case s.decided:
		default:
			s.inLine = true
			s.head = append(s.head, c)
			if c == ':' || len(s.head) >= len("retry:") {
				s.classify()
			}
		}
	}
}

// end classifies an unterminated last line.
func (s *sniffer) end() {
	if s.inLine && !s.decided {
		s.classify()
	}
}

func (s *sniffer) classify() {
	s.decided = true
	name, _, _ := strings.Cut(string(s.head), ":")
	switch name {
	case "": // a comment
	case "data":
		s.sawData = true
	case "event", "id", "retry":
	default:
		s.foreign = true
	}
}
