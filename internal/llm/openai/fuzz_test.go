package openai

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

// mockCaptures returns the exact bytes the mock server sends on the OpenAI
// wire for replies covering every shape and fault it can render: the real
// captures the fuzzer starts from.
func mockCaptures(tb testing.TB) [][]byte {
	tb.Helper()
	args := func(s string) json.RawMessage { return json.RawMessage(s) }
	replies := []mock.Reply{
		{Text: "Hello there, how can I help?", Chunk: 5},
		{Reasoning: "Let me think about it.", Text: "It is 4.", Chunk: 4},
		{Reasoning: "only thinking"},
		{Text: " \n "},
		{ToolCalls: []mock.ToolCall{{Name: "read", Arguments: args(`{"path":"notes.txt"}`)}, {ID: "call_x", Name: "bash", Arguments: args(`{"command":"ls -la"}`)}}, Chunk: 3},
		{Text: "Let me look.", ToolCalls: []mock.ToolCall{{Name: "grep", Arguments: args(`"{not json"`)}}},
		{ToolCalls: []mock.ToolCall{{Name: "job_list"}}, Finish: "stop"},
		{Text: "alive", Chunk: 1, KeepAlive: true},
		{Text: "cut sho", Finish: "length"},
		{Finish: "length"},
		{Text: "no", Finish: "content_filter"},
		{Text: "odd", Finish: "weird-reason.v2"},
		{Text: "no finish", Finish: "none"},
		{Text: "usage", Usage: &mock.Usage{Input: 100, Output: 20, CacheRead: 64, Reasoning: 7}},
		{Fault: mock.FaultEmpty},
		{Fault: mock.FaultEmptyBody},
		{Fault: mock.FaultCut, Text: "partial answer", Chunk: 4},
		{Fault: mock.FaultMalformed, Text: "before the bad payload"},
		{Fault: mock.FaultContextWindow},
		{Fault: mock.FaultOverloaded},
	}
	return llmtest.MockCaptures(wire, replies)
}

// wire is this package's client for llmtest's shared helpers.
func wire(ctx context.Context, rt http.RoundTripper) iter.Seq[llm.Chunk] {
	c := &Client{BaseURL: "http://mock.invalid", Provider: "deepseek", HTTP: &http.Client{Transport: rt}}
	return c.Stream(ctx, simpleRequest)
}

// Messages a finish may carry: fixed texts, never provider bytes.
var fixedMessages = map[string]bool{
	msgEmpty: true, msgEmptyBody: true, msgClosed: true, msgMalformed: true, msgNotSSE: true,
	msgTooLong: true, msgStreamError: true, msgStreamCW: true, msgUnknown: true,
}

// FuzzStream is llmtest.FuzzStream over this wire: arbitrary bytes as the
// SSE body of a 200 answer, whole and in small reads; the chunk protocol and
// finish rules of llmtest.CheckStream hold and the split changes nothing.
func FuzzStream(f *testing.F) {
	seeds := mockCaptures(f)
	for _, s := range []string{
		"",
		": keep-alive\n\n",
		"data: [DONE]\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{}\"}}]}}]}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"x\"}},{\"id\":\"b\",\"function\":{\"name\":\"y\"}}]}}]}\n\ndata: [DONE]\n\n",
		"event: error\ndata: {\"message\":\"maximum context length\"}\n\n",
		"data: {\"error\":\"overloaded\"}\n\n",
		"<html>502 Bad Gateway</html>",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"",
	} {
		seeds = append(seeds, []byte(s))
	}
	llmtest.FuzzStream(f, wire, func(msg string) bool { return fixedMessages[msg] }, seeds...)
}
