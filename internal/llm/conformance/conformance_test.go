// Package conformance checks the four wire adapters (chat, Anthropic,
// Responses, Gemini) against the same fake server, row by row of the
// docs/providers.md failure table: each wire fact the mock server can
// produce must classify to the same code on every wire.
package conformance

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/anthropic"
	"github.com/reinsdev/reins/internal/llm/gemini"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/llm/openai"
	"github.com/reinsdev/reins/internal/llm/responses"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type wire struct {
	name  string
	model func(url string, idle time.Duration) llm.Model
}

var wires = []wire{
	{"openai", func(url string, idle time.Duration) llm.Model {
		return &openai.Client{BaseURL: url, IdleTimeout: idle, Provider: "deepseek"}
	}},
	{"anthropic", func(url string, idle time.Duration) llm.Model {
		return &anthropic.Client{BaseURL: url, APIKey: "k", IdleTimeout: idle}
	}},
	{"responses", func(url string, idle time.Duration) llm.Model {
		return &responses.Client{BaseURL: url + "/v1", APIKey: "k", IdleTimeout: idle}
	}},
	{"gemini", func(url string, idle time.Duration) llm.Model {
		return &gemini.Client{BaseURL: url, APIKey: "k", IdleTimeout: idle}
	}},
}

// outcome is what a stream settled to.
type outcome struct {
	blocks     []llm.Block
	finish     llm.Finish
	chunks     int
	finishes   int
	retryAfter time.Duration
}

func stream(t *testing.T, m llm.Model, ctx context.Context) outcome {
	t.Helper()
	var asm llm.Assembler
	var o outcome
	req := &llm.Request{Model: "m", System: "sys", MaxTokens: 100, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "hello"}}}}}
	for c := range m.Stream(ctx, req) {
		o.chunks++
		if c.Type == llm.ChunkFinish {
			o.finishes++
		}
		asm.Push(c)
	}
	o.blocks, o.finish = asm.Blocks(), asm.Finish()
	return o
}

func TestFailureTable(t *testing.T) {
	huge := strings.Repeat("x", 16<<20+100)
	tests := []struct {
		name   string
		reply  mock.Reply
		idle   time.Duration
		kind   llm.FinishKind
		code   llm.Code
		text   string        // expected assembled text, when checked
		after  time.Duration // expected RetryAfter
		skipOn string        // the wires the row does not apply to, space-separated
	}{
		// Successes that must not be mistaken for failures.
		{name: "plain text", reply: mock.Reply{Text: "hi there", Chunk: 3}, kind: llm.FinishStop, text: "hi there"},
		{name: "reasoning only is content", reply: mock.Reply{Reasoning: "just thinking"}, kind: llm.FinishStop},
		{name: "whitespace-only text is content", reply: mock.Reply{Text: " \n "}, kind: llm.FinishStop, text: " \n "},
		{name: "keep-alive comments ignored", reply: mock.Reply{Text: "alive", Chunk: 1, KeepAlive: true}, kind: llm.FinishStop, text: "alive"},
		{name: "16 MiB line", reply: mock.Reply{Text: huge}, kind: llm.FinishStop, text: huge},
		{name: "empty max-tokens keeps its meaning", reply: mock.Reply{Finish: "length"}, kind: llm.FinishMaxTokens, skipOn: "anthropic"},
		{name: "empty max-tokens keeps its meaning", reply: mock.Reply{Finish: "max_tokens"}, kind: llm.FinishMaxTokens, skipOn: "openai"},
		{name: "tool calls", reply: mock.Reply{ToolCalls: []mock.ToolCall{{Name: "read", Arguments: []byte(`{"path":"a"}`)}}, Chunk: 4}, kind: llm.FinishToolCalls},

		// docs/providers.md failure rows.
		{name: "EMPTY_RESPONSE terminal stop without content", reply: mock.Reply{Fault: mock.FaultEmpty}, kind: llm.FinishError, code: llm.CodeEmptyResponse},
		{name: "EMPTY_RESPONSE 200 with empty body", reply: mock.Reply{Fault: mock.FaultEmptyBody}, kind: llm.FinishError, code: llm.CodeEmptyResponse},
		{name: "CONTEXT_WINDOW_EXCEEDED", reply: mock.Reply{Fault: mock.FaultContextWindow}, kind: llm.FinishError, code: llm.CodeContextWindowExceeded},
		{name: "CONTEXT_WINDOW_EXCEEDED beats EMPTY_RESPONSE", reply: mock.Reply{Finish: "model_context_window_exceeded"}, kind: llm.FinishError, code: llm.CodeContextWindowExceeded, skipOn: "openai gemini"},
		{name: "CONTEXT_WINDOW_EXCEEDED beats EMPTY_RESPONSE", reply: mock.Reply{Body: "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n" +
			"data: {\"error\":{\"message\":\"This model's maximum context length is 8192 tokens\",\"code\":\"context_length_exceeded\"}}\n\n"},
			kind: llm.FinishError, code: llm.CodeContextWindowExceeded, skipOn: "anthropic responses gemini"},
		{name: "CONTEXT_WINDOW_EXCEEDED beats EMPTY_RESPONSE", reply: mock.Reply{Body: "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n\n" +
			"event: error\ndata: {\"type\":\"error\",\"code\":\"context_length_exceeded\",\"message\":\"Your input exceeds the context window of this model.\"}\n\n"},
			kind: llm.FinishError, code: llm.CodeContextWindowExceeded, skipOn: "openai anthropic gemini"},
		{name: "CONTEXT_WINDOW_EXCEEDED beats EMPTY_RESPONSE", reply: mock.Reply{Body: "data: {\"error\":{\"code\":400,\"message\":\"The input token count (1250000) exceeds the maximum number of tokens allowed (1048576).\",\"status\":\"INVALID_ARGUMENT\"}}\n\n"},
			kind: llm.FinishError, code: llm.CodeContextWindowExceeded, skipOn: "openai anthropic responses"},
		{name: "STREAM_CLOSED cut before the terminal signal", reply: mock.Reply{Text: "half a sen", Fault: mock.FaultCut}, kind: llm.FinishError, code: llm.CodeStreamClosed},
		{name: "MALFORMED_RESPONSE", reply: mock.Reply{Text: "ok", Fault: mock.FaultMalformed}, kind: llm.FinishError, code: llm.CodeMalformedResponse},
		{name: "RATE_LIMIT with Retry-After", reply: mock.Reply{Status: 429, Headers: map[string]string{"Retry-After": "3"}}, kind: llm.FinishError, code: llm.CodeRateLimit, after: 3 * time.Second},
		{name: "SERVER 500", reply: mock.Reply{Status: 500}, kind: llm.FinishError, code: llm.CodeServer},
		{name: "SERVER 503", reply: mock.Reply{Status: 503}, kind: llm.FinishError, code: llm.CodeServer},
		{name: "SERVER overloaded", reply: mock.Reply{Text: "so far", Fault: mock.FaultOverloaded}, kind: llm.FinishError, code: llm.CodeServer},
		{name: "AUTH 401", reply: mock.Reply{Status: 401}, kind: llm.FinishError, code: llm.CodeAuth},
		{name: "AUTH 403", reply: mock.Reply{Status: 403}, kind: llm.FinishError, code: llm.CodeAuth},
		{name: "INVALID_REQUEST 400", reply: mock.Reply{Status: 400}, kind: llm.FinishError, code: llm.CodeInvalidRequest},
		{name: "INVALID_REQUEST 413", reply: mock.Reply{Status: 413}, kind: llm.FinishError, code: llm.CodeInvalidRequest},
		{name: "INVALID_REQUEST 422", reply: mock.Reply{Status: 422}, kind: llm.FinishError, code: llm.CodeInvalidRequest},
		{name: "QUOTA 402", reply: mock.Reply{Status: 402}, kind: llm.FinishError, code: llm.CodeQuota},
		{name: "TIMEOUT no byte for the idle timeout", reply: mock.Reply{Fault: mock.FaultStall}, idle: 150 * time.Millisecond, kind: llm.FinishError, code: llm.CodeTimeout},
		{name: "TRANSPORT connection reset", reply: mock.Reply{Fault: mock.FaultReset}, kind: llm.FinishError, code: llm.CodeTransport},
		{name: "refusal", reply: mock.Reply{Text: "no", Finish: "content_filter"}, kind: llm.FinishRefusal, skipOn: "anthropic"},
		{name: "refusal", reply: mock.Reply{Text: "no", Finish: "refusal"}, kind: llm.FinishRefusal, skipOn: "openai"},
	}
	for _, w := range wires {
		for _, tc := range tests {
			if slices.Contains(strings.Fields(tc.skipOn), w.name) {
				continue
			}
			t.Run(w.name+"/"+tc.name, func(t *testing.T) {
				url, srv, stop := mock.StartTest(&mock.Script{Replies: []mock.Reply{tc.reply}})
				defer stop()
				o := stream(t, w.model(url, tc.idle), context.Background())
				if o.finishes != 1 {
					t.Errorf("%d finish chunks, want exactly 1", o.finishes)
				}
				if o.finish.Kind != tc.kind || o.finish.Code != tc.code {
					t.Fatalf("finish %s %s (%s), want %s %s", o.finish.Kind, o.finish.Code, o.finish.Message, tc.kind, tc.code)
				}
				if tc.text != "" && llm.BlocksText(o.blocks) != tc.text {
					t.Errorf("text of %d bytes, want %d", len(llm.BlocksText(o.blocks)), len(tc.text))
				}
				if tc.after != 0 && o.finish.RetryAfter != tc.after {
					t.Errorf("RetryAfter %v, want %v", o.finish.RetryAfter, tc.after)
				}
				if n := srv.Count(); n != 1 {
					t.Errorf("%d requests, want exactly one attempt", n)
				}
			})
		}
	}
}

func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for _, w := range wires {
		o := stream(t, w.model("http://"+addr, 0), context.Background())
		if o.finish.Kind != llm.FinishError || o.finish.Code != llm.CodeTransport {
			t.Errorf("%s: finish %+v, want TRANSPORT", w.name, o.finish)
		}
	}
}

func TestCallerCancel(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			url, srv, stop := mock.StartTest(&mock.Script{Replies: []mock.Reply{{Fault: mock.FaultStall}}})
			defer stop()
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				for srv.InFlight() == 0 {
					time.Sleep(time.Millisecond)
				}
				cancel()
			}()
			o := stream(t, w.model(url, 0), ctx)
			if o.finish.Kind != llm.FinishAborted || o.finish.Code != llm.CodeAborted {
				t.Errorf("finish %+v, want aborted ABORTED", o.finish)
			}
		})
	}
}
