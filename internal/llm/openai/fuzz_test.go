package openai

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
	var out [][]byte
	for _, r := range replies {
		srv := mock.NewServer(&mock.Script{Replies: []mock.Reply{r}})
		var body bytes.Buffer
		c := &Client{BaseURL: "http://mock.invalid", Provider: "deepseek",
			HTTP: &http.Client{Transport: llmtest.Recorder{RT: srv.Transport(), Body: &body}}}
		for range c.Stream(context.Background(), simpleRequest) {
		}
		out = append(out, body.Bytes())
	}
	return out
}

// Messages a finish may carry: fixed texts, never provider bytes.
var fixedMessages = map[string]bool{
	msgEmpty: true, msgEmptyBody: true, msgClosed: true, msgMalformed: true, msgNotSSE: true,
	msgTooLong: true, msgStreamError: true, msgStreamCW: true, msgUnknown: true,
}

// FuzzStream serves arbitrary bytes as the SSE body of a 200 answer, once
// whole and once in small reads, and checks the stream contract: no panic;
// the protocol of checkProtocol (exactly one finish, last; blocks opened in
// order from 0; deltas only into an open block of their kind; every block
// ended); a finish kind from the known set; an error finish with a known
// code or a sanitised [A-Z0-9_] code and a fixed message; a stop finish only
// with content; and the same chunks however the body is split.
func FuzzStream(f *testing.F) {
	for _, b := range mockCaptures(f) {
		f.Add(b, uint8(0))
		f.Add(b, uint8(2))
	}
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
		f.Add([]byte(s), uint8(0))
	}

	f.Fuzz(func(t *testing.T, body []byte, split uint8) {
		whole := streamBody(t, body, 0)
		checkProtocol(t, whole)
		checkFinish(t, whole)
		step := 1 + int(split%8)
		if chopped := streamBody(t, body, step); !cmp.Equal(whole, chopped) {
			t.Fatalf("reads of %d bytes change the stream (-whole +chopped):\n%s", step, cmp.Diff(whole, chopped))
		}
		var asm llm.Assembler
		for _, c := range whole {
			asm.Push(c)
		}
		_ = asm.Blocks()
	})
}

func streamBody(t *testing.T, body []byte, step int) []llm.Chunk {
	t.Helper()
	c := &Client{BaseURL: "http://fuzz.invalid", Provider: "deepseek",
		HTTP: &http.Client{Transport: llmtest.BodyTransport{Body: body, Step: step}}}
	var chunks []llm.Chunk
	for ch := range c.Stream(context.Background(), simpleRequest) {
		chunks = append(chunks, ch)
	}
	return chunks
}

// checkFinish checks the finish of a stream that was neither cancelled nor
// timed out (checkProtocol has checked there is exactly one, last).
func checkFinish(t *testing.T, chunks []llm.Chunk) {
	t.Helper()
	fin := chunks[len(chunks)-1].Finish
	opened := 0
	for _, c := range chunks {
		if c.Type == llm.ChunkBlockStart {
			opened++
		}
	}
	switch fin.Kind {
	case llm.FinishStop:
		if opened == 0 {
			t.Fatalf("stop finish with no content block: want %s", llm.CodeEmptyResponse)
		}
	case llm.FinishToolCalls, llm.FinishMaxTokens, llm.FinishRefusal:
	case llm.FinishError:
		if !llmtest.ValidCode(fin.Code) {
			t.Fatalf("error finish code %q is neither known nor [A-Z0-9_]", fin.Code)
		}
		if !fixedMessages[fin.Message] {
			t.Fatalf("error finish message %q is not one of the fixed texts", fin.Message)
		}
	default:
		t.Fatalf("finish kind %q is not in the known set", fin.Kind)
	}
}
