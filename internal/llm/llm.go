// Package llm is the provider-neutral vocabulary between reins and a model:
// content blocks, the streamed chunks an adapter emits, the finish that ends
// every stream, the failure codes an adapter decides from wire facts, and the
// assembler that turns a chunk stream back into blocks.
//
// Adapters (one per wire, in sub-packages) own their wire structs and emit
// only these types, so the agent loop, the session log and the retry
// executor never see a wire format.
package llm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"time"
)

// BlockType names the kind of a content block.
type BlockType string

const (
	BlockText       BlockType = "text"
	BlockReasoning  BlockType = "reasoning"
	BlockToolCall   BlockType = "tool-call"
	BlockToolResult BlockType = "tool-result"
)

// Block is one piece of message content. Only the fields of its Type are set.
type Block struct {
	Type BlockType `json:"type"`
	// Text is the text of a text or reasoning block.
	Text string `json:"text,omitempty"`
	// Signature is an opaque provider token that must be sent back with a
	// reasoning block (Anthropic thinking signatures).
	Signature string `json:"signature,omitempty"`
	// ID, Name and Arguments describe a tool call; Arguments is the raw JSON
	// text the model produced (it may be invalid JSON).
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	// CallID, Content and IsError describe a tool result.
	CallID  string `json:"callId,omitempty"`
	Content string `json:"content,omitempty"`
	IsError bool   `json:"isError,omitempty"`
	// Image travels with a tool result (read of a PNG, JPEG, GIF or WebP
	// file). A wire that cannot carry it sends ResultText instead. A
	// pointer, so that Block stays comparable.
	Image *Image `json:"image,omitempty"`
}

// Image is an image a tool result carries: its media type (image/png,
// image/jpeg, image/gif, image/webp) and its bytes (base64 in JSON).
type Image struct {
	MediaType string `json:"mediaType"`
	Data      []byte `json:"data"`
}

// ResultText is a tool result's content for a model that is not shown its
// image: the content, then a line saying that the model was not shown the
// image, so it does not believe it saw it.
func ResultText(b Block) string {
	if b.Image == nil {
		return b.Content
	}
	out := b.Content
	if out != "" && out[len(out)-1] != '\n' {
		out += "\n"
	}
	return out + fmt.Sprintf("[%s image of %d bytes not shown: this model takes no image input]", b.Image.MediaType, len(b.Image.Data))
}

// ResultParts is what a wire sends for tool result b of req: its text and
// its image when the request's model takes images (Request.Images), else
// ResultText's note and no image. Every wire asks here, so the rule of
// when an image is sent is one rule.
func ResultParts(req *Request, b Block) (string, *Image) {
	if b.Image != nil && req != nil && req.Images {
		return b.Content, b.Image
	}
	return ResultText(b), nil
}

// ResultContent is the content of tool result b for a wire whose result
// is its text alone or, with an image (ResultParts), a list of parts: the
// text part, when there is text, then the image part; text and image make
// the wire's parts.
func ResultContent[P any](req *Request, b Block, text func(string) P, image func(*Image) P) any {
	t, img := ResultParts(req, b)
	if img == nil {
		return t
	}
	parts := make([]P, 0, 2)
	if t != "" {
		parts = append(parts, text(t))
	}
	return append(parts, image(img))
}

// DataURL is img as a data: URL, the form the OpenAI wires take inline
// images in.
func (img *Image) DataURL() string {
	return "data:" + img.MediaType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
}

// Role is the author of a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool carries tool-result blocks back to the model.
	RoleTool Role = "tool"
)

// Message is one entry of the model history.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// Text returns the concatenated text blocks of m.
func (m Message) Text() string { return BlocksText(m.Content) }

// BlocksText concatenates the text of the text blocks in bs.
func BlocksText(bs []Block) string {
	var n int
	for _, b := range bs {
		if b.Type == BlockText {
			n += len(b.Text)
		}
	}
	buf := make([]byte, 0, n)
	for _, b := range bs {
		if b.Type == BlockText {
			buf = append(buf, b.Text...)
		}
	}
	return string(buf)
}

// Usage counts tokens. Zero fields are unknown or zero. InputTokens is the
// whole prompt, cache reads and writes included (the OpenAI wire's
// convention; the Anthropic adapter adds its separately reported cache
// reads and writes), and CacheReadTokens and CacheWriteTokens say how much
// of it came from, or went into, the cache.
//
// CostUSD is what the tokens cost at the model's price; nil means the price
// (of this usage or of any part summed into it) is unknown, which is shown
// as unknown and never as 0.
type Usage struct {
	InputTokens      int      `json:"inputTokens"`
	OutputTokens     int      `json:"outputTokens"`
	CacheReadTokens  int      `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int      `json:"cacheWriteTokens,omitempty"`
	ReasoningTokens  int      `json:"reasoningTokens,omitempty"`
	CostUSD          *float64 `json:"costUsd,omitempty"`
}

// Add returns u plus v. The sum's cost is known only when the cost of every
// part that counted tokens is known.
func (u Usage) Add(v Usage) Usage {
	s := Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
		ReasoningTokens:  u.ReasoningTokens + v.ReasoningTokens,
	}
	switch {
	case u.CostUSD != nil && v.CostUSD != nil:
		c := *u.CostUSD + *v.CostUSD
		s.CostUSD = &c
	case u.CostUSD != nil && v.counts() == 0:
		c := *u.CostUSD
		s.CostUSD = &c
	case v.CostUSD != nil && u.counts() == 0:
		c := *v.CostUSD
		s.CostUSD = &c
	}
	return s
}

// counts is the sum of u's token counts (0: u counted nothing).
func (u Usage) counts() int {
	return u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens + u.ReasoningTokens
}

// IsZero reports whether u has no counts and no cost.
func (u Usage) IsZero() bool { return u.counts() == 0 && u.CostUSD == nil }

// TokensText is u's token counts as one line ("tokens in 10 out 5", then
// cached and reasoning when there are any), the way reins log and reins
// view both say them; each adds its own cost.
func (u Usage) TokensText() string {
	s := fmt.Sprintf("tokens in %d out %d", u.InputTokens, u.OutputTokens)
	if u.CacheReadTokens > 0 {
		s += fmt.Sprintf(" cached %d", u.CacheReadTokens)
	}
	if u.ReasoningTokens > 0 {
		s += fmt.Sprintf(" reasoning %d", u.ReasoningTokens)
	}
	return s
}

// ChunkType names the kind of a stream chunk.
type ChunkType string

const (
	ChunkBlockStart     ChunkType = "block-start"
	ChunkTextDelta      ChunkType = "text-delta"
	ChunkReasoningDelta ChunkType = "reasoning-delta"
	ChunkToolCallDelta  ChunkType = "tool-call-delta"
	ChunkBlockEnd       ChunkType = "block-end"
	ChunkUsage          ChunkType = "usage"
	ChunkFinish         ChunkType = "finish"
)

// Chunk is one provider-neutral stream element. Index identifies the block a
// block-start, delta or block-end belongs to; indexes are assigned by the
// adapter in the order blocks open, from 0.
type Chunk struct {
	Type  ChunkType `json:"type"`
	Index int       `json:"index"`
	// Block is set on block-start: its Type, and for a tool call its ID and Name.
	Block *Block `json:"block,omitempty"`
	// Delta is the text of a text, reasoning or tool-call (arguments) delta.
	// On a reasoning block-end it may carry the block's signature.
	Delta     string  `json:"delta,omitempty"`
	Signature string  `json:"signature,omitempty"`
	Usage     *Usage  `json:"usage,omitempty"`
	Finish    *Finish `json:"finish,omitempty"`
}

// FinishKind is how a model response ended.
type FinishKind string

const (
	FinishStop      FinishKind = "stop"
	FinishToolCalls FinishKind = "tool-calls"
	FinishMaxTokens FinishKind = "max-tokens"
	FinishRefusal   FinishKind = "refusal"
	// FinishPause asks the loop to continue the same step with the partial
	// response appended (Anthropic pause_turn).
	FinishPause   FinishKind = "pause"
	FinishError   FinishKind = "error"
	FinishAborted FinishKind = "aborted"
)

// Finish ends every stream. Code and Message are set for FinishError.
type Finish struct {
	Kind    FinishKind `json:"kind"`
	Code    Code       `json:"code,omitempty"`
	Message string     `json:"message,omitempty"`
	// RetryAfter is the provider's requested delay (HTTP Retry-After), if any.
	RetryAfter time.Duration `json:"retryAfterMs,omitempty"`
}

// Code is a failure code: the closed set a turn may end with (a
// session's turn/end failure, an error finish). The adapters decide the
// wire codes from wire facts (docs/providers.md); the agent loop and
// compaction write reins' own. This list is the one place either is
// spelled: a code outside it may be provider-chosen text and is never
// shown (ParseCode).
type Code string

// Failure codes decided by an adapter from wire facts (docs/providers.md).
const (
	CodeEmptyResponse         Code = "EMPTY_RESPONSE"
	CodeContextWindowExceeded Code = "CONTEXT_WINDOW_EXCEEDED"
	CodeStreamClosed          Code = "STREAM_CLOSED"
	CodeMalformedResponse     Code = "MALFORMED_RESPONSE"
	CodeRateLimit             Code = "RATE_LIMIT"
	CodeServer                Code = "SERVER"
	CodeAuth                  Code = "AUTH"
	CodeInvalidRequest        Code = "INVALID_REQUEST"
	CodeTimeout               Code = "TIMEOUT"
	CodeTransport             Code = "TRANSPORT"
	CodeAborted               Code = "ABORTED"
	CodeQuota                 Code = "QUOTA"
)

// Failure codes reins itself writes besides the adapters'.
const (
	// CodeMaxSteps is a turn that reached its step limit while the model
	// still wanted to call tools (internal/agent).
	CodeMaxSteps Code = "MAX_STEPS"
	// CodeMaxWakeups is the closing turn of a run that reached its bound
	// of notice-only turns with background jobs still running
	// (subagent.MaxWakeups): those jobs were killed.
	CodeMaxWakeups Code = "MAX_WAKEUPS"
	// CodeLogWrite is a turn whose session log could not be written: the
	// log is the truth, so a turn it cannot record ends.
	CodeLogWrite Code = "LOG_WRITE"
	// CodeNoSummary is a forced compaction whose summary request ended
	// without text (a refusal, a cut, an empty answer).
	CodeNoSummary Code = "NO_SUMMARY"
)

// codes is the closed set, in the order above.
var codes = []Code{
	CodeEmptyResponse, CodeContextWindowExceeded, CodeStreamClosed,
	CodeMalformedResponse, CodeRateLimit, CodeServer, CodeAuth,
	CodeInvalidRequest, CodeTimeout, CodeTransport, CodeAborted,
	CodeQuota,
	CodeMaxSteps, CodeMaxWakeups, CodeLogWrite, CodeNoSummary,
}

// ProviderCodes returns a copy of the adapters' codes: what a retry
// policy may name (docs/providers.md).
func ProviderCodes() []Code { return slices.Clone(codes[:12]) }

// Codes returns a copy of the closed set.
func Codes() []Code { return slices.Clone(codes) }

// ParseCode returns s as a Code when it is in the closed set.
func ParseCode(s string) (Code, bool) {
	c := Code(s)
	return c, slices.Contains(codes, c)
}

// Known reports whether c is in the closed set.
func (c Code) Known() bool { return slices.Contains(codes, c) }

func (c Code) String() string { return string(c) }

// ErrorFinish returns an error finish chunk.
func ErrorFinish(code Code, message string) Chunk {
	return Chunk{Type: ChunkFinish, Finish: &Finish{Kind: FinishError, Code: code, Message: message}}
}

// ToolSpec describes a tool to the model. Parameters is a JSON Schema object.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptySchema is a schema that takes no arguments.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// Schema is the schema every wire sends for t: Parameters, or, for a tool
// without parameters (none, blank, or JSON null), an object schema with no
// properties, since the providers reject a tool whose schema is missing.
func (t ToolSpec) Schema() json.RawMessage {
	switch p := bytes.TrimSpace(t.Parameters); {
	case len(p) == 0, string(p) == "null":
		return emptySchema
	}
	return t.Parameters
}

// Request is one model request.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int
	// Effort is how hard a reasoning model should think (--effort, config
	// and agent-file `effort`); empty sends no such field and leaves the
	// provider's default. Each wire maps it to its own knob, and only
	// there: OpenAI chat sends `reasoning_effort` (the string), the
	// Responses wire `reasoning: {effort}` (the string), Anthropic
	// `thinking: {type: enabled, budget_tokens: Effort.ThinkingBudget()}`
	// with max_tokens raised by that budget, Gemini
	// `generationConfig.thinkingConfig.thinkingBudget` (ThinkingBudget).
	// DeepSeek's knob is a model choice (deepseek-reasoner), which the
	// harness makes before the request exists.
	Effort Effort
	// Images says the model takes image input, so a tool result's image
	// (read of a PNG) is sent as an image on the wire. Off, the wire sends
	// ResultText's note instead: the harness sets it from the model
	// catalogue, and a model the catalogue does not know gets no images
	// (a text-only server rejects a request that carries one).
	Images bool
}

// Effort is a reasoning effort: low, medium or high (SPEC §12).
type Effort string

// The efforts --effort accepts.
const (
	EffortLow    Effort = "low"
	EffortMedium Effort = "medium"
	EffortHigh   Effort = "high"
)

// Efforts lists the valid efforts, lowest first.
var Efforts = []Effort{EffortLow, EffortMedium, EffortHigh}

// ParseEffort checks s: "" (none) or one of Efforts.
func ParseEffort(s string) (Effort, error) {
	switch e := Effort(s); e {
	case "", EffortLow, EffortMedium, EffortHigh:
		return e, nil
	}
	return "", fmt.Errorf("effort %q: want low, medium or high", s)
}

// ThinkingBudget is the thinking-token budget of e on the wires that take
// a number (Anthropic budget_tokens, Gemini thinkingBudget); 0 for none.
// High stays at 16384 so that with the default 8192 output tokens the
// request fits every model's output limit (32000 for the smallest).
func (e Effort) ThinkingBudget() int {
	switch e {
	case EffortLow:
		return 2048
	case EffortMedium:
		return 8192
	case EffortHigh:
		return 16384
	}
	return 0
}

// Model streams one response per request. The returned sequence yields zero
// or more chunks and then exactly one finish chunk, whatever happens on the
// wire: failures are finishes with a code, never Go errors, so every caller
// handles one shape. An implementation makes exactly one wire attempt;
// retrying is the caller's decision. Breaking out of the sequence early
// releases the connection.
type Model interface {
	Stream(ctx context.Context, req *Request) iter.Seq[Chunk]
}

// ModelFunc adapts a function to Model.
type ModelFunc func(ctx context.Context, req *Request) iter.Seq[Chunk]

// Stream calls f.
func (f ModelFunc) Stream(ctx context.Context, req *Request) iter.Seq[Chunk] { return f(ctx, req) }
