package openai

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reinsdev/reins/internal/llm"
)

func textBlock(s string) llm.Block      { return llm.Block{Type: llm.BlockText, Text: s} }
func reasoningBlock(s string) llm.Block { return llm.Block{Type: llm.BlockReasoning, Text: s} }
func callBlock(id, name, args string) llm.Block {
	return llm.Block{Type: llm.BlockToolCall, ID: id, Name: name, Arguments: args}
}

func TestStream(t *testing.T) {
	stop := llm.Finish{Kind: llm.FinishStop}
	failed := func(code llm.Code) llm.Finish { return llm.Finish{Kind: llm.FinishError, Code: code} }

	const (
		usageCached   = `{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"prompt_tokens_details":{"cached_tokens":64,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":7}}}`
		usageDeepSeek = `{"id":"1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}],"usage":{"prompt_tokens":90,"completion_tokens":12,"total_tokens":102,"prompt_cache_hit_tokens":80,"prompt_cache_miss_tokens":10,"completion_tokens_details":{"reasoning_tokens":5}}}`
		usagePlain    = `{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":0,"total_tokens":3}}`
	)

	tool := func(fields string) string { return delta(`"tool_calls":[` + fields + `]`) }

	cwBody := `{"error":{"message":"This model's maximum context length is 131072 tokens. ` + canary + `","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
	plainErr := `{"error":{"message":"` + canary + `","type":"invalid_request_error","code":null}}`

	tests := []struct {
		name       string
		handler    http.HandlerFunc
		idle       time.Duration
		want       llm.Finish // Message is checked separately
		wantBlocks []llm.Block
		wantUsage  llm.Usage
		wantLogged bool // the canary reached the host log
	}{
		// Content.
		{
			name:       "plain text",
			handler:    streamOK(events(delta(roleDelta), text("Hel"), text("lo"), finishWith("stop"), usagePlain, done)),
			want:       stop,
			wantBlocks: []llm.Block{textBlock("Hello")},
			wantUsage:  llm.Usage{InputTokens: 3},
		},
		{
			name: "deepseek reasoning then text",
			handler: streamOK(events(
				delta(`"role":"assistant","content":null,"reasoning_content":""`),
				delta(`"content":null,"reasoning_content":"Think"`),
				delta(`"content":null,"reasoning_content":"ing."`),
				delta(`"content":"Hi","reasoning_content":null`),
				usageDeepSeek, done)),
			want:       stop,
			wantBlocks: []llm.Block{reasoningBlock("Thinking."), textBlock("Hi")},
			wantUsage:  llm.Usage{InputTokens: 90, OutputTokens: 12, CacheReadTokens: 80, ReasoningTokens: 5},
		},
		{
			name:       "reasoning field spelling",
			handler:    streamOK(events(delta(`"reasoning":"hm"`), text("ok"), delta(`"reasoning":"again"`), finishWith("stop"), done)),
			want:       stop,
			wantBlocks: []llm.Block{reasoningBlock("hm"), textBlock("ok"), reasoningBlock("again")},
		},
		{
			name:       "both reasoning spellings in one delta count once",
			handler:    streamOK(events(delta(`"reasoning_content":"a","reasoning":"a"`), delta(`"reasoning_content":"b","reasoning":"b"`), text("c"), done)),
			want:       stop,
			wantBlocks: []llm.Block{reasoningBlock("ab"), textBlock("c")},
		},
		{
			name:       "reasoning only is content",
			handler:    streamOK(events(delta(`"reasoning_content":"nothing to add"`), finishWith("stop"), done)),
			want:       stop,
			wantBlocks: []llm.Block{reasoningBlock("nothing to add")},
		},
		{
			name:       "whitespace only text is content",
			handler:    streamOK(events(delta(roleDelta), text(" \n"), finishWith("stop"), done)),
			want:       stop,
			wantBlocks: []llm.Block{textBlock(" \n")},
		},
		{
			name: "parallel tool calls split across deltas",
			handler: streamOK(events(
				delta(roleDelta),
				text("Let me look."),
				tool(`{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":""}}`),
				tool(`{"index":1,"id":"call_b","type":"function","function":{"name":"ls","arguments":"{\"d"}}`),
				tool(`{"index":0,"function":{"arguments":"{\"path\":"}}`),
				tool(`{"index":1,"function":{"arguments":"\":1}"}}`),
				tool(`{"index":0,"function":{"arguments":"\"a.go\"}"}}`),
				finishWith("tool_calls"), done)),
			want: llm.Finish{Kind: llm.FinishToolCalls},
			wantBlocks: []llm.Block{
				textBlock("Let me look."),
				callBlock("call_a", "read", `{"path":"a.go"}`),
				callBlock("call_b", "ls", `{"d":1}`),
			},
		},
		{
			name: "tool calls under finish stop keep their blocks",
			handler: streamOK(events(
				tool(`{"index":0,"id":"call_x","type":"function","function":{"name":"run","arguments":"{}"}}`),
				finishWith("stop"), done)),
			want:       stop,
			wantBlocks: []llm.Block{callBlock("call_x", "run", "{}")},
		},
		{
			name: "every call at index 0 with its own id",
			handler: streamOK(events(
				tool(`{"index":0,"id":"c1","type":"function","function":{"name":"a","arguments":"{\"n\":"}}`),
				tool(`{"index":0,"function":{"arguments":"1}"}}`),
				tool(`{"index":0,"id":"c2","type":"function","function":{"name":"b","arguments":"{}"}}`),
				finishWith("tool_calls"), done)),
			want:       llm.Finish{Kind: llm.FinishToolCalls},
			wantBlocks: []llm.Block{callBlock("c1", "a", `{"n":1}`), callBlock("c2", "b", "{}")},
		},
		{
			name: "call without id or index gets an id",
			handler: streamOK(events(
				tool(`{"function":{"arguments":"{\"q\""}}`),
				tool(`{"function":{"name":"grep","arguments":":1}"}}`),
				finishWith("tool_calls"), done)),
			want:       llm.Finish{Kind: llm.FinishToolCalls},
			wantBlocks: []llm.Block{callBlock("call_0", "grep", `{"q":1}`)},
		},
		{
			name: "unnamed call is still surfaced at the end",
			handler: streamOK(events(
				tool(`{"index":0,"id":"c1","type":"function","function":{"name":"a","arguments":"{}"}}`),
				tool(`{"index":1,"function":{"arguments":"{\"x\":1}"}}`),
				finishWith("tool_calls"), done)),
			want:       llm.Finish{Kind: llm.FinishToolCalls},
			wantBlocks: []llm.Block{callBlock("c1", "a", "{}"), callBlock("call_1", "", `{"x":1}`)},
		},
		{
			name:       "legacy function_call",
			handler:    streamOK(events(delta(`"function_call":{"name":"f","arguments":"{}"}`), finishWith("function_call"), done)),
			want:       llm.Finish{Kind: llm.FinishToolCalls},
			wantBlocks: []llm.Block{callBlock("call_0", "f", "{}")},
		},
		{
			name:       "usage with cached_tokens in a final chunk with empty choices",
			handler:    streamOK(events(text("x"), finishWith("stop"), usageCached, done)),
			want:       stop,
			wantBlocks: []llm.Block{textBlock("x")},
			wantUsage:  llm.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 64, ReasoningTokens: 7},
		},
		{
			name: "keep-alive comments and CRLF line endings",
			handler: streamOK(": keep-alive\n\n" + "data: " + text("a") + "\r\n\r\n" + ":\n\n" +
				"event: ping\ndata: " + text("b") + "\n\n" + ": keep-alive\r\n\r\n" +
				"data: " + finishWith("stop") + "\n\ndata: [DONE]\n\n"),
			want:       stop,
			wantBlocks: []llm.Block{textBlock("ab")},
		},
		{
			name:       "refusal delta is text",
			handler:    streamOK(events(delta(`"content":null,"refusal":"I can't."`), finishWith("stop"), done)),
			want:       stop,
			wantBlocks: []llm.Block{textBlock("I can't.")},
		},

		// Finish reasons.
		{
			name:    "length with empty content stays max-tokens",
			handler: streamOK(events(delta(roleDelta), finishWith("length"), done)),
			want:    llm.Finish{Kind: llm.FinishMaxTokens},
		},
		{
			name:       "length after text",
			handler:    streamOK(events(text("partial"), finishWith("length"), done)),
			want:       llm.Finish{Kind: llm.FinishMaxTokens},
			wantBlocks: []llm.Block{textBlock("partial")},
		},
		{
			name:    "content_filter is refusal",
			handler: streamOK(events(delta(roleDelta), finishWith("content_filter"), done)),
			want:    llm.Finish{Kind: llm.FinishRefusal},
		},
		{
			name:       "unknown finish reason",
			handler:    streamOK(events(text("x"), finishWith("weird_reason"), done)),
			want:       failed("WEIRD_REASON"),
			wantBlocks: []llm.Block{textBlock("x")},
		},
		{
			name:    "unknown finish reason is sanitised into a code",
			handler: streamOK(events(text("x"), finishWith("bad reason: "+canary), done)),
			want:    failed(llm.Code("BAD_REASON__" + strings.ToUpper(strings.ReplaceAll(canary, "-", "_")))),
			// The reason's text only survives as [A-Z0-9_].
			wantBlocks: []llm.Block{textBlock("x")},
		},

		// EMPTY_RESPONSE.
		{
			name:      "stop with no content",
			handler:   streamOK(events(delta(roleDelta), finishWith("stop"), usagePlain, done)),
			want:      failed(llm.CodeEmptyResponse),
			wantUsage: llm.Usage{InputTokens: 3},
		},
		{
			// Issue 14 item 5: one rule for empty answers, whatever the
			// finish reason claims.
			name:      "tool_calls with no content",
			handler:   streamOK(events(delta(roleDelta), finishWith("tool_calls"), usagePlain, done)),
			want:      failed(llm.CodeEmptyResponse),
			wantUsage: llm.Usage{InputTokens: 3},
		},
		{
			name:    "function_call with no content",
			handler: streamOK(events(delta(roleDelta), finishWith("function_call"), done)),
			want:    failed(llm.CodeEmptyResponse),
		},
		{
			name:    "absent finish with no content",
			handler: streamOK(events(delta(roleDelta), done)),
			want:    failed(llm.CodeEmptyResponse),
		},
		{
			name:    "only [DONE]",
			handler: streamOK(events(done)),
			want:    failed(llm.CodeEmptyResponse),
		},
		{
			name:    "200 with an empty body",
			handler: streamOK(""),
			want:    failed(llm.CodeEmptyResponse),
		},
		{
			name:    "200 with only keep-alives",
			handler: streamOK(": keep-alive\n\n: keep-alive\n\n"),
			want:    failed(llm.CodeEmptyResponse),
		},

		// CONTEXT_WINDOW_EXCEEDED wins over EMPTY_RESPONSE.
		{
			name:       "HTTP 400 context_length_exceeded",
			handler:    status(400, cwBody),
			want:       failed(llm.CodeContextWindowExceeded),
			wantLogged: true,
		},
		{
			name:       "in-stream context error after an empty length finish",
			handler:    streamOK(events(delta(roleDelta), finishWith("length"), cwBody, done)),
			want:       failed(llm.CodeContextWindowExceeded),
			wantLogged: true,
		},
		{
			name:       "in-stream error after text",
			handler:    streamOK(events(text("Hel"), `{"error":{"message":"`+canary+`","type":"server_error","code":500}}`)),
			want:       failed(llm.CodeServer),
			wantBlocks: []llm.Block{textBlock("Hel")},
			wantLogged: true,
		},
		{
			name:       "named error event",
			handler:    streamOK(events(text("Hel")) + "event: error\ndata: {\"message\":\"" + canary + " prompt is too long\"}\n\n"),
			want:       failed(llm.CodeContextWindowExceeded),
			wantBlocks: []llm.Block{textBlock("Hel")},
			wantLogged: true,
		},
		{
			name:       "in-stream error as a bare string",
			handler:    streamOK(events(`{"error":"`+canary+`"}`, done)),
			want:       failed(llm.CodeServer),
			wantLogged: true,
		},

		// STREAM_CLOSED.
		{
			name:       "cut after text",
			handler:    streamOK(events(delta(roleDelta), text("Hel"))),
			want:       failed(llm.CodeStreamClosed),
			wantBlocks: []llm.Block{textBlock("Hel")},
		},
		{
			name:       "cut after the finish reason",
			handler:    streamOK(events(text("Hello"), finishWith("stop"))),
			want:       failed(llm.CodeStreamClosed),
			wantBlocks: []llm.Block{textBlock("Hello")},
		},
		{
			name:       "cut inside a tool call",
			handler:    streamOK(events(tool(`{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":"{\"a"}}`))),
			want:       failed(llm.CodeStreamClosed),
			wantBlocks: []llm.Block{callBlock("c", "f", `{"a`)},
		},
		{
			name:    "cut inside the first event",
			handler: streamOK("data: " + text("Hel")[:20]),
			want:    failed(llm.CodeStreamClosed),
		},
		{
			name: "connection dropped mid chunked body",
			handler: sendThen(events(text("Hel")), func(http.ResponseWriter, *http.Request) {
				panic(http.ErrAbortHandler)
			}),
			want:       failed(llm.CodeStreamClosed),
			wantBlocks: []llm.Block{textBlock("Hel")},
		},

		// MALFORMED_RESPONSE.
		{
			name:       "payload is not JSON",
			handler:    streamOK(events(text("a"), "not json "+canary, done)),
			want:       failed(llm.CodeMalformedResponse),
			wantBlocks: []llm.Block{textBlock("a")},
			wantLogged: true,
		},
		{
			name:    "payload is a JSON array",
			handler: streamOK(events(`[1,2]`, done)),
			want:    failed(llm.CodeMalformedResponse),
		},
		{
			name:    "payload is JSON null",
			handler: streamOK(events(`null`, done)),
			want:    failed(llm.CodeMalformedResponse),
		},
		{
			name:    "choices of the wrong type",
			handler: streamOK(events(`{"choices":"x"}`, done)),
			want:    failed(llm.CodeMalformedResponse),
		},
		{
			name:    "content of the wrong type",
			handler: streamOK(events(delta(`"content":7`), done)),
			want:    failed(llm.CodeMalformedResponse),
		},
		{
			name:    "200 body that is not an event stream",
			handler: status(200, `{"id":"x","choices":[{"message":{"content":"`+canary+`"}}]}`),
			want:    failed(llm.CodeMalformedResponse),
		},

		// HTTP statuses.
		{
			name:       "429 with Retry-After seconds",
			handler:    status(429, plainErr, "Retry-After", "3"),
			want:       llm.Finish{Kind: llm.FinishError, Code: llm.CodeRateLimit, RetryAfter: 3 * time.Second},
			wantLogged: true,
		},
		{
			name:       "429 insufficient_quota",
			handler:    status(429, `{"error":{"message":"`+canary+`","type":"insufficient_quota","code":"insufficient_quota"}}`),
			want:       failed(llm.CodeQuota),
			wantLogged: true,
		},
		{name: "500", handler: status(500, plainErr), want: failed(llm.CodeServer), wantLogged: true},
		{
			name:       "503 with Retry-After",
			handler:    status(503, plainErr, "Retry-After", "2"),
			want:       llm.Finish{Kind: llm.FinishError, Code: llm.CodeServer, RetryAfter: 2 * time.Second},
			wantLogged: true,
		},
		{name: "401", handler: status(401, plainErr), want: failed(llm.CodeAuth), wantLogged: true},
		{name: "403", handler: status(403, plainErr), want: failed(llm.CodeAuth), wantLogged: true},
		{name: "400", handler: status(400, plainErr), want: failed(llm.CodeInvalidRequest), wantLogged: true},
		{name: "413", handler: status(413, plainErr), want: failed(llm.CodeInvalidRequest), wantLogged: true},
		{name: "422", handler: status(422, plainErr), want: failed(llm.CodeInvalidRequest), wantLogged: true},
		{name: "402", handler: status(402, plainErr), want: failed(llm.CodeQuota), wantLogged: true},
		{name: "404", handler: status(404, plainErr), want: failed(llm.CodeInvalidRequest), wantLogged: true},
		{
			name:    "redirect is not followed",
			handler: status(307, plainErr, "Location", "/elsewhere"),
			want:    failed(llm.CodeInvalidRequest),
		},

		// TIMEOUT: IdleTimeout is tiny and the server stalls forever, so
		// only the watchdog can end these.
		{
			name:    "stall before headers",
			handler: func(w http.ResponseWriter, r *http.Request) { drain(r); stall(w, r) },
			idle:    50 * time.Millisecond,
			want:    failed(llm.CodeTimeout),
		},
		{
			name:    "stall after headers",
			handler: sendThen("", stall),
			idle:    50 * time.Millisecond,
			want:    failed(llm.CodeTimeout),
		},
		{
			name:       "stall mid-stream",
			handler:    sendThen(events(text("Hel"))+": keep-alive\n\n", stall),
			idle:       50 * time.Millisecond,
			want:       failed(llm.CodeTimeout),
			wantBlocks: []llm.Block{textBlock("Hel")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, logs := newClient(t, tt.handler)
			c.IdleTimeout = tt.idle
			r := collect(t, context.Background(), c, simpleRequest)

			if diff := cmp.Diff(tt.want, r.fin, cmpopts.IgnoreFields(llm.Finish{}, "Message")); diff != "" {
				t.Errorf("finish (-want +got):\n%s", diff)
			}
			if (r.fin.Kind == llm.FinishError) != (r.fin.Message != "") {
				t.Errorf("finish %+v: an error finish, and only one, carries a message", r.fin)
			}
			if diff := cmp.Diff(tt.wantBlocks, r.asm.Blocks(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("blocks (-want +got):\n%s", diff)
			}
			if got := r.asm.Usage(); got != tt.wantUsage {
				t.Errorf("usage = %+v, want %+v", got, tt.wantUsage)
			}
			if strings.Contains(r.fin.Message, canary) || strings.Contains(r.fin.Message, strings.ToLower(canary)) {
				t.Errorf("finish message %q carries provider text", r.fin.Message)
			}
			if tt.wantLogged && !strings.Contains(logs.String(), canary) {
				t.Errorf("provider error text was not logged; log:\n%s", logs)
			}
		})
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	at := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	c, _ := newClient(t, status(429, `{"error":{"message":"slow down"}}`, "Retry-After", at))
	r := collect(t, context.Background(), c, simpleRequest)
	if r.fin.Code != llm.CodeRateLimit {
		t.Fatalf("finish = %+v, want RATE_LIMIT", r.fin)
	}
	// An HTTP date has one-second resolution and some time passed since
	// it was written: allow slack below the hour, none above.
	if r.fin.RetryAfter <= 50*time.Minute || r.fin.RetryAfter > time.Hour {
		t.Errorf("RetryAfter = %v, want just under 1h", r.fin.RetryAfter)
	}
}

// TestHugeLine decodes one text delta longer than llm.MaxLineBytes intact,
// and rejects an event beyond the size limit instead of truncating it.
func TestHugeLine(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", llm.MaxLineBytes/16+1) // 16 MiB + 16 bytes
	// big needs no JSON escaping; building it by hand keeps the test fast.
	c, _ := newClient(t, streamOK(events(delta(roleDelta), delta(`"content":"`+big+`"`), finishWith("stop"), done)))
	r := collect(t, context.Background(), c, simpleRequest)
	if r.fin.Kind != llm.FinishStop {
		t.Fatalf("finish = %+v, want stop", r.fin)
	}
	if got := r.asm.Text(); got != big {
		t.Fatalf("text: got %d bytes, want %d bytes intact", len(got), len(big))
	}

	tooBig := strings.Repeat("x", maxEventSize)
	c, _ = newClient(t, streamOK(events(text("a"), delta(`"content":"`+tooBig+`"`), finishWith("stop"), done)))
	r = collect(t, context.Background(), c, simpleRequest)
	if r.fin.Code != llm.CodeMalformedResponse {
		t.Fatalf("finish = %+v, want MALFORMED_RESPONSE", r.fin)
	}
}

func TestTransport(t *testing.T) {
	t.Run("connection refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		// HTTP nil: the package's default client. The base URL carries a
		// user, a password and a query: none of it may reach the message.
		c := &Client{BaseURL: "http://user:s3cret@" + addr + "/v1?key=QUERYSECRET"}
		r := collect(t, context.Background(), c, simpleRequest)
		if r.fin.Code != llm.CodeTransport {
			t.Fatalf("finish = %+v, want TRANSPORT", r.fin)
		}
		// The message names the host and port it could not reach (issue
		// 48: "transport errors name the host and port"), nothing else of
		// the URL.
		if !strings.Contains(r.fin.Message, addr) {
			t.Errorf("message %q does not name %s", r.fin.Message, addr)
		}
		for _, secret := range []string{"user", "s3cret", "QUERYSECRET", "/v1"} {
			if strings.Contains(r.fin.Message, secret) {
				t.Errorf("message %q leaks %q of the base URL", r.fin.Message, secret)
			}
		}
	})

	reset := func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		conn.(*net.TCPConn).SetLinger(0) // close with RST, not FIN
		conn.Close()
	}
	t.Run("connection reset before the response", func(t *testing.T) {
		c, _ := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { drain(r); reset(w, r) }))
		r := collect(t, context.Background(), c, simpleRequest)
		if r.fin.Code != llm.CodeTransport {
			t.Fatalf("finish = %+v, want TRANSPORT", r.fin)
		}
	})
	t.Run("connection reset mid-stream", func(t *testing.T) {
		c, _ := newClient(t, sendThen(events(text("Hel")), reset))
		r := collect(t, context.Background(), c, simpleRequest)
		if r.fin.Code != llm.CodeTransport {
			t.Fatalf("finish = %+v, want TRANSPORT", r.fin)
		}
	})
}

func TestCancel(t *testing.T) {
	t.Run("caller cancels mid-stream", func(t *testing.T) {
		c, _ := newClient(t, sendThen(events(text("Hel")), stall))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var chunks []llm.Chunk
		for ch := range c.Stream(ctx, simpleRequest) {
			chunks = append(chunks, ch)
			if ch.Type == llm.ChunkTextDelta {
				cancel()
			}
		}
		checkProtocol(t, chunks)
		f := chunks[len(chunks)-1].Finish
		if f.Kind != llm.FinishAborted || f.Code != llm.CodeAborted {
			t.Fatalf("finish = %+v, want aborted ABORTED", f)
		}
	})
	t.Run("cancelled before the request", func(t *testing.T) {
		c, _ := newClient(t, streamOK(events(text("x"), finishWith("stop"), done)))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := collect(t, ctx, c, simpleRequest)
		if r.fin.Kind != llm.FinishAborted || r.fin.Code != llm.CodeAborted {
			t.Fatalf("finish = %+v, want aborted ABORTED", r.fin)
		}
	})
	t.Run("cancelled events still buffered are not yielded", func(t *testing.T) {
		// All events arrive in one write, so they sit in the parser's
		// buffer when the caller cancels after the first delta.
		c, _ := newClient(t, sendThen(events(text("a"), text("b"), text("c")), stall))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var chunks []llm.Chunk
		deltas := 0
		for ch := range c.Stream(ctx, simpleRequest) {
			chunks = append(chunks, ch)
			if ch.Type == llm.ChunkTextDelta {
				deltas++
				cancel()
			}
		}
		checkProtocol(t, chunks)
		if deltas != 1 {
			t.Errorf("%d text deltas after cancelling at the first, want 1", deltas)
		}
		if f := chunks[len(chunks)-1].Finish; f.Code != llm.CodeAborted {
			t.Fatalf("finish = %+v, want ABORTED", f)
		}
	})
}

// TestBreakClosesBody stops consuming after the first chunk: the server
// must see its client go away (the body was closed, not left to the GC).
func TestBreakClosesBody(t *testing.T) {
	gone := make(chan struct{})
	c, _ := newClient(t, sendThen(events(text("Hel")), func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		close(gone)
	}))
	n := 0
	for range c.Stream(context.Background(), simpleRequest) {
		n++
		break
	}
	if n != 1 {
		t.Fatalf("got %d chunks before break", n)
	}
	select {
	case <-gone:
	case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
		t.Fatal("server never saw the connection close after break")
	}
}

// TestOneAttempt checks that a failing call is not retried underneath the
// caller, whatever the status.
func TestOneAttempt(t *testing.T) {
	for _, code := range []int{429, 500, 503} {
		var hits atomic.Int32
		c, _ := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			status(code, "{}", "Retry-After", "0")(w, r)
		}))
		collect(t, context.Background(), c, simpleRequest)
		if n := hits.Load(); n != 1 {
			t.Errorf("HTTP %d: %d attempts, want 1", code, n)
		}
	}
}
