// Package mock is reins's scripted model: a script format, the engine that
// picks a reply for each request, and a wire-level fake server that renders
// replies as real OpenAI chat-completions and Anthropic Messages SSE bytes,
// faults included. `reins mock-llm`, the in-process `mock` provider, the
// demo, the tests and the benchmarks all use this one engine.
package mock

import (
	"encoding/json"
	"time"
)

// Script is a list of replies, served one per request (README.md: `reins mock-llm
// --script FILE`, YAML or JSON).
//
// A request takes the first reply, in order, that is not used up and whose
// Match (if any) occurs in the request's last user or tool message text or its
// system prompt. A reply is used up after one request unless Repeat is set.
// When no reply fits, the server answers with Fallback if set, else HTTP 500
// with a JSON error naming the request number.
type Script struct {
	Replies  []Reply `json:"replies" yaml:"replies"`
	Fallback *Reply  `json:"fallback,omitempty" yaml:"fallback,omitempty"`
}

// Reply is one scripted response.
type Reply struct {
	// Match selects this reply only for requests whose last message or
	// system prompt contains it.
	Match string `json:"match,omitempty" yaml:"match,omitempty"`
	// Repeat keeps the reply available for every matching request.
	Repeat bool `json:"repeat,omitempty" yaml:"repeat,omitempty"`

	Reasoning string `json:"reasoning,omitempty" yaml:"reasoning,omitempty"`
	Text      string `json:"text,omitempty" yaml:"text,omitempty"`
	// Echo appends the request's last user or tool message text to Text,
	// computed per request (the default script answers "mock: <prompt>").
	Echo      bool       `json:"echo,omitempty" yaml:"echo,omitempty"`
	ToolCalls []ToolCall `json:"toolCalls,omitempty" yaml:"toolCalls,omitempty"`
	// Finish is the raw wire finish reason to send (OpenAI finish_reason or
	// Anthropic stop_reason). Default: tool calls / tool_use when there are
	// tool calls, else stop / end_turn. "none" sends no finish reason.
	Finish string `json:"finish,omitempty" yaml:"finish,omitempty"`
	Usage  *Usage `json:"usage,omitempty" yaml:"usage,omitempty"`

	// Fault replaces or cuts the normal reply; see the Fault constants.
	Fault string `json:"fault,omitempty" yaml:"fault,omitempty"`
	// Status, Headers and Body send a non-200 HTTP answer (e.g. 429 with
	// Retry-After) instead of a stream.
	Status  int               `json:"status,omitempty" yaml:"status,omitempty"`
	Headers map[string]string `json:"headers,omitempty" yaml:"headers,omitempty"`
	Body    string            `json:"body,omitempty" yaml:"body,omitempty"`

	// Delay waits before the response headers; ChunkDelay between chunks.
	Delay      Duration `json:"delay,omitempty" yaml:"delay,omitempty"`
	ChunkDelay Duration `json:"chunkDelay,omitempty" yaml:"chunkDelay,omitempty"`
	// Chunk splits text and reasoning into deltas of at most this many bytes
	// (default: whole).
	Chunk int `json:"chunk,omitempty" yaml:"chunk,omitempty"`
	// KeepAlive sends an SSE comment line (": keep-alive") before each chunk.
	KeepAlive bool `json:"keepAlive,omitempty" yaml:"keepAlive,omitempty"`
	// Barrier holds the reply until this many requests holding a Barrier
	// reply are in flight at once (proves concurrency without a clock).
	Barrier int `json:"barrier,omitempty" yaml:"barrier,omitempty"`
}

// Faults.
const (
	// FaultEmpty: a well-formed stream with a terminal stop and no content.
	FaultEmpty = "empty"
	// FaultEmptyBody: HTTP 200 with an empty body.
	FaultEmptyBody = "empty-body"
	// FaultCut: the reply's content, then the connection closes before the
	// terminal signal ([DONE] / message_stop).
	FaultCut = "cut"
	// FaultMalformed: the reply's content, then an SSE data payload that is
	// not JSON.
	FaultMalformed = "malformed"
	// FaultStall: headers, then no byte until the client goes away; with
	// KeepAlive, a keep-alive comment every ChunkDelay (10 ms when unset)
	// and nothing else.
	FaultStall = "stall"
	// FaultContextWindow: the provider's prompt-too-long error.
	FaultContextWindow = "context-window"
	// FaultOverloaded: Anthropic overloaded_error event mid-stream (OpenAI
	// wire: HTTP 529 style server error).
	FaultOverloaded = "overloaded"
	// FaultReset: the TCP connection is closed without an HTTP answer.
	FaultReset = "reset"
)

// ToolCall is a scripted tool call. Arguments is sent as JSON text; a JSON
// string value is sent verbatim (so invalid JSON can be scripted). In a YAML
// script, an object becomes its compact JSON text and a string is kept as a
// JSON string, i.e. sent verbatim. Empty Arguments are sent as "{}". An empty
// ID gets a unique one per request (call_N on the OpenAI wire, toolu_mock_N
// on the Anthropic wire).
type ToolCall struct {
	ID        string          `json:"id,omitempty" yaml:"id,omitempty"`
	Name      string          `json:"name" yaml:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty" yaml:"arguments,omitempty"`
	// Namespace, on the Responses wire only, is the function_call's
	// namespace: Name is then a function of the request's namespace tool
	// of that name (Codex sends an MCP server's tools as the namespace
	// mcp__SERVER). The other wires ignore it.
	Namespace string `json:"namespace,omitempty" yaml:"namespace,omitempty"`
}

// Usage is scripted token usage. Each field is sent as the wire's own field,
// unconverted: Input as prompt_tokens / input_tokens, Output as
// completion_tokens / output_tokens, CacheRead as cached_tokens and
// prompt_cache_hit_tokens / cache_read_input_tokens, CacheWrite as
// cache_creation_input_tokens (Anthropic wire only), Reasoning as
// reasoning_tokens (OpenAI wire only). A reply without Usage gets a small
// estimate from the request and reply sizes, on the Anthropic wire split
// by a simulated prompt cache (cache.go).
type Usage struct {
	Input      int `json:"input" yaml:"input"`
	Output     int `json:"output" yaml:"output"`
	CacheRead  int `json:"cacheRead,omitempty" yaml:"cacheRead,omitempty"`
	CacheWrite int `json:"cacheWrite,omitempty" yaml:"cacheWrite,omitempty"`
	Reasoning  int `json:"reasoning,omitempty" yaml:"reasoning,omitempty"`
}

// Duration is a time.Duration written as "150ms" in scripts; a plain
// integer is milliseconds.
type Duration time.Duration
