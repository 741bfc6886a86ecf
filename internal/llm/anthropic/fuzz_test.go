package anthropic

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"testing"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/llmtest"
	"github.com/reinsdev/reins/internal/llm/mock"
)

// mockCaptures returns the exact bytes the mock server sends on the
// Anthropic wire for replies covering every shape and fault it can render:
// the real captures the fuzzer starts from.
func mockCaptures(tb testing.TB) [][]byte {
	tb.Helper()
	args := func(s string) json.RawMessage { return json.RawMessage(s) }
	replies := []mock.Reply{
		{Text: "Hello there, how can I help?", Chunk: 5},
		{Reasoning: "Let me think about it.", Text: "It is 4.", Chunk: 4},
		{Reasoning: "only thinking"},
		{Text: " \n "},
		{ToolCalls: []mock.ToolCall{{Name: "read", Arguments: args(`{"path":"notes.txt"}`)}, {ID: "toolu_x", Name: "bash", Arguments: args(`{"command":"ls -la"}`)}}, Chunk: 3},
		{Text: "Let me look.", ToolCalls: []mock.ToolCall{{Name: "grep", Arguments: args(`"{not json"`)}}},
		{ToolCalls: []mock.ToolCall{{Name: "job_list"}}},
		{Text: "alive", Chunk: 1, KeepAlive: true},
		{Text: "cut sho", Finish: "max_tokens"},
		{Finish: "max_tokens"},
		{Text: "no", Finish: "refusal"},
		{Text: "wait", Finish: "pause_turn"},
		{Finish: "model_context_window_exceeded"},
		{Text: "odd", Finish: "weird-reason.v2"},
		{Text: "no finish", Finish: "none"},
		{Text: "usage", Usage: &mock.Usage{Input: 100, Output: 20, CacheRead: 64}},
		{Fault: mock.FaultEmpty},
		{Fault: mock.FaultEmptyBody},
		{Fault: mock.FaultCut, Text: "partial answer", Chunk: 4},
		{Fault: mock.FaultMalformed, Text: "before the bad payload"},
		{Fault: mock.FaultOverloaded, Text: "then overloaded"},
		{Fault: mock.FaultContextWindow},
	}
	return llmtest.MockCaptures(wire, replies)
}

// wire is this package's client for llmtest's shared helpers.
func wire(ctx context.Context, rt http.RoundTripper) iter.Seq[llm.Chunk] {
	c := &Client{BaseURL: "http://mock.invalid", APIKey: "k", HTTP: &http.Client{Transport: rt}}
	return c.Stream(ctx, simpleRequest())
}

// Messages a finish may carry: fixed texts, never provider bytes.
var fixedMessages = map[string]bool{
	"provider sent an empty response body":      true,
	"stream ended before message_stop":          true,
	"stream event exceeds the size limit":       true,
	"prompt exceeds the model's context window": true,
	"model returned no content":                 true,
	"model stopped for an unrecognised reason":  true,
	"provider is overloaded":                    true,
	"provider reported an internal error":       true,
	"provider rate limit reached":               true,
	"provider rejected the credentials":         true,
	"quota or balance exhausted":                true,
	"provider rejected the request":             true,
	"provider reported an error":                true,
	"provider sent an unreadable stream event":  true,
}

// FuzzStream serves arbitrary bytes as the SSE body of a 200 answer, once
// whole and once in small reads, and checks the stream contract: no panic;
// exactly one finish, last; blocks opened in order from 0; deltas and ends
// only for an opened, not yet ended block, deltas of the block's kind; a
// finish kind from the known set; an error finish with a known code or a
// sanitised [A-Z0-9_] code and a fixed message; a stop finish only with
// content; and the same chunks however the body is split.
func FuzzStream(f *testing.F) {
	seeds := mockCaptures(f)
	for _, s := range []string{
		"",
		"event: ping\ndata: {\"type\": \"ping\"}\n\n",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"x\",\"input\":{\"a\":1}}}\n\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\ndata: {\"type\":\"message_stop\"}\n\n",
		"event: content_block_start\ndata: {\"index\":0,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"xyz\"}}\n\nevent: message_stop\ndata: {}\n\n",
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long\"}}\n\n",
		"<html>502 Bad Gateway</html>",
	} {
		seeds = append(seeds, []byte(s))
	}
	llmtest.FuzzStream(f, wire, func(msg string) bool { return fixedMessages[msg] }, seeds...)
}
