package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

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
	var out [][]byte
	for _, r := range replies {
		srv := mock.NewServer(&mock.Script{Replies: []mock.Reply{r}})
		var body bytes.Buffer
		c := &Client{BaseURL: "http://mock.invalid", APIKey: "k",
			HTTP: &http.Client{Transport: llmtest.Recorder{RT: srv.Transport(), Body: &body}}}
		for range c.Stream(context.Background(), simpleRequest()) {
		}
		out = append(out, body.Bytes())
	}
	return out
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
	for _, b := range mockCaptures(f) {
		f.Add(b, uint8(0))
		f.Add(b, uint8(2))
	}
	for _, s := range []string{
		"",
		"event: ping\ndata: {\"type\": \"ping\"}\n\n",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"x\",\"input\":{\"a\":1}}}\n\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\ndata: {\"type\":\"message_stop\"}\n\n",
		"event: content_block_start\ndata: {\"index\":0,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"xyz\"}}\n\nevent: message_stop\ndata: {}\n\n",
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long\"}}\n\n",
		"<html>502 Bad Gateway</html>",
	} {
		f.Add([]byte(s), uint8(0))
	}

	f.Fuzz(func(t *testing.T, body []byte, split uint8) {
		whole := streamBody(t, body, 0)
		checkChunks(t, whole)
		step := 1 + int(split%8)
		if chopped := streamBody(t, body, step); !cmp.Equal(whole, chopped) {
			t.Fatalf("reads of %d bytes change the stream (-whole +chopped):\n%s", step, cmp.Diff(whole, chopped))
		}
		_ = assemble(whole).Blocks()
	})
}

func streamBody(t *testing.T, body []byte, step int) []llm.Chunk {
	t.Helper()
	c := &Client{BaseURL: "http://fuzz.invalid", APIKey: "k",
		HTTP: &http.Client{Transport: llmtest.BodyTransport{Body: body, Step: step}}}
	var chunks []llm.Chunk
	for ch := range c.Stream(context.Background(), simpleRequest()) {
		chunks = append(chunks, ch)
	}
	return chunks
}

// checkChunks checks the chunk protocol and the finish of a stream that was
// neither cancelled nor timed out (llmtest.CheckStream, the rule every
// wire's fuzz test shares) against this adapter's fixed messages.
func checkChunks(t *testing.T, chunks []llm.Chunk) {
	t.Helper()
	llmtest.CheckStream(t, chunks, func(msg string) bool { return fixedMessages[msg] })
}
