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
// neither cancelled nor timed out.
func checkChunks(t *testing.T, chunks []llm.Chunk) {
	t.Helper()
	if len(chunks) == 0 {
		t.Fatal("no chunks: the stream must end with a finish")
	}
	for i, c := range chunks {
		if (c.Type == llm.ChunkFinish) != (i == len(chunks)-1) {
			t.Fatalf("chunk %d of %d is %q: want exactly one finish, last", i, len(chunks), c.Type)
		}
	}
	kinds := map[int]llm.BlockType{}
	ended := map[int]bool{}
	deltaKind := map[llm.ChunkType]llm.BlockType{
		llm.ChunkTextDelta: llm.BlockText, llm.ChunkReasoningDelta: llm.BlockReasoning, llm.ChunkToolCallDelta: llm.BlockToolCall,
	}
	for i, c := range chunks {
		switch c.Type {
		case llm.ChunkBlockStart:
			if c.Index != len(kinds) || c.Block == nil {
				t.Fatalf("chunk %d: block-start index %d (block %v), want index %d", i, c.Index, c.Block, len(kinds))
			}
			kinds[c.Index] = c.Block.Type
		case llm.ChunkTextDelta, llm.ChunkReasoningDelta, llm.ChunkToolCallDelta:
			k, ok := kinds[c.Index]
			if !ok || ended[c.Index] || k != deltaKind[c.Type] {
				t.Fatalf("chunk %d: %s into block %d (opened %v, ended %v, kind %q)", i, c.Type, c.Index, ok, ended[c.Index], k)
			}
		case llm.ChunkBlockEnd:
			if _, ok := kinds[c.Index]; !ok || ended[c.Index] {
				t.Fatalf("chunk %d: block-end of block %d (opened %v, ended %v)", i, c.Index, ok, ended[c.Index])
			}
			ended[c.Index] = true
		case llm.ChunkUsage:
			if c.Usage == nil {
				t.Fatalf("chunk %d: usage chunk without usage", i)
			}
		case llm.ChunkFinish:
		default:
			t.Fatalf("chunk %d: unknown type %q", i, c.Type)
		}
	}
	fin := chunks[len(chunks)-1].Finish
	if fin == nil {
		t.Fatal("finish chunk without a Finish")
	}
	switch fin.Kind {
	case llm.FinishStop:
		if len(kinds) == 0 {
			t.Fatalf("stop finish with no content block: want %s", llm.CodeEmptyResponse)
		}
	case llm.FinishToolCalls, llm.FinishMaxTokens, llm.FinishRefusal, llm.FinishPause:
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
