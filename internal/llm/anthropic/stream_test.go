package anthropic

import (
	"context"
	"fmt"
	"io"
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

func finish(k llm.FinishKind) llm.Finish { return llm.Finish{Kind: k} }

func failure(code llm.Code) llm.Finish { return llm.Finish{Kind: llm.FinishError, Code: code} }

var aborted = llm.Finish{Kind: llm.FinishAborted, Code: llm.CodeAborted}

func text(s string) llm.Block { return llm.Block{Type: llm.BlockText, Text: s} }

// hijack answers with raw bytes on the connection, then closes it; with
// reset the close sends a TCP RST instead of a FIN.
func hijack(raw string, reset bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// Unread request bytes would turn a plain close into a reset.
		_, _ = io.Copy(io.Discard, r.Body)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		_, _ = buf.WriteString(raw)
		_ = buf.Flush()
		if reset {
			_ = conn.(*net.TCPConn).SetLinger(0)
		}
		_ = conn.Close()
	}
}

// httpChunk frames s as one chunk of a chunked HTTP body.
func httpChunk(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }

// refusedURL is an address nothing listens on.
func refusedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return "http://" + addr
}

func TestStream(t *testing.T) {
	twoTools := msgStart(20, 0) +
		startText(0) + textDelta(0, "Let me look.") + blockStop(0) +
		startToolUse(1, "toolu_1", "read") + jsonDelta(1, "") + jsonDelta(1, `{"pa`) + jsonDelta(1, `th": "a.`) + jsonDelta(1, `go"}`) + blockStop(1) +
		startToolUse(2, "toolu_2", "grep") + jsonDelta(2, `{"pattern":`) + jsonDelta(2, ` "x\"y"}`) + blockStop(2) +
		msgDelta("tool_use", 40) + msgStop()

	// big is one text_delta whose data line is longer than 16 MiB.
	big := strings.Repeat("héllo wörld ", llm.MaxLineBytes/14+1)

	tests := []struct {
		name    string
		handler http.Handler
		url     func(t *testing.T) string // overrides the server URL
		idle    time.Duration
		// cancelAt cancels the caller's context after this many chunks;
		// -1 cancels before the call.
		cancelAt int
		want     llm.Finish
		blocks   []llm.Block
		anyBlock bool       // blocks depend on timing; do not compare
		usage    *llm.Usage // compared when set
		logged   bool       // the canary must reach Logf
	}{
		{
			name:    "text",
			handler: sseBody(textReply("Hello, world.")),
			want:    finish(llm.FinishStop),
			blocks:  []llm.Block{text("Hello, world.")},
			usage:   &llm.Usage{InputTokens: 10, OutputTokens: 5},
		},
		{
			name: "text in several deltas",
			handler: sseBody(msgStart(10, 0) + startText(0) + textDelta(0, "Hel") + textDelta(0, "lo") + textDelta(0, "") + textDelta(0, "!") +
				blockStop(0) + msgDelta("end_turn", 3) + msgStop()),
			want:   finish(llm.FinishStop),
			blocks: []llm.Block{text("Hello!")},
		},
		{
			name: "thinking with signature then text",
			handler: sseBody(msgStart(10, 0) +
				startThinking(0) + thinkingDelta(0, "Let me ") + thinkingDelta(0, "think.") + signatureDelta(0, "EqQBCgIYAhIM1gbcDa9GJwZA") + blockStop(0) +
				startText(1) + textDelta(1, "Answer.") + blockStop(1) +
				msgDelta("end_turn", 9) + msgStop()),
			want: finish(llm.FinishStop),
			blocks: []llm.Block{
				{Type: llm.BlockReasoning, Text: "Let me think.", Signature: "EqQBCgIYAhIM1gbcDa9GJwZA"},
				text("Answer."),
			},
		},
		{
			name: "thinking only is content",
			handler: sseBody(msgStart(10, 0) +
				startThinking(0) + thinkingDelta(0, "Nothing to add.") + signatureDelta(0, "sig") + blockStop(0) +
				msgDelta("end_turn", 4) + msgStop()),
			want:   finish(llm.FinishStop),
			blocks: []llm.Block{{Type: llm.BlockReasoning, Text: "Nothing to add.", Signature: "sig"}},
		},
		{
			name:    "redacted thinking is content and keeps its data",
			handler: sseBody(msgStart(10, 0) + startRedacted(0, "EmwKAhgBEgy3va3") + blockStop(0) + msgDelta("end_turn", 4) + msgStop()),
			want:    finish(llm.FinishStop),
			blocks:  []llm.Block{{Type: llm.BlockReasoning, Signature: redactedPrefix + "EmwKAhgBEgy3va3"}},
		},
		{
			name:    "whitespace-only text is content",
			handler: sseBody(textReply(" \n\t ")),
			want:    finish(llm.FinishStop),
			blocks:  []llm.Block{text(" \n\t ")},
		},
		{
			name:    "two tool uses with split input json",
			handler: sseBody(twoTools),
			want:    finish(llm.FinishToolCalls),
			blocks: []llm.Block{
				text("Let me look."),
				{Type: llm.BlockToolCall, ID: "toolu_1", Name: "read", Arguments: `{"path": "a.go"}`},
				{Type: llm.BlockToolCall, ID: "toolu_2", Name: "grep", Arguments: `{"pattern": "x\"y"}`},
			},
			usage: &llm.Usage{InputTokens: 20, OutputTokens: 40},
		},
		{
			name: "tool use without input deltas gets {}",
			handler: sseBody(msgStart(5, 0) + startToolUse(0, "toolu_9", "now") + blockStop(0) +
				msgDelta("tool_use", 7) + msgStop()),
			want:   finish(llm.FinishToolCalls),
			blocks: []llm.Block{{Type: llm.BlockToolCall, ID: "toolu_9", Name: "now", Arguments: `{}`}},
		},
		{
			name:    "usage with cache read",
			handler: sseBody(msgStart(12, 3000) + startText(0) + textDelta(0, "ok") + blockStop(0) + msgDelta("end_turn", 2) + msgStop()),
			want:    finish(llm.FinishStop),
			blocks:  []llm.Block{text("ok")},
			usage:   &llm.Usage{InputTokens: 3012, OutputTokens: 2, CacheReadTokens: 3000},
		},
		{
			name: "usage with cache read and write",
			handler: sseBody(ev("message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"c","usage":{"input_tokens":12,"cache_creation_input_tokens":500,"cache_read_input_tokens":3000,"output_tokens":1}}}`) +
				startText(0) + textDelta(0, "ok") + blockStop(0) + msgDelta("end_turn", 2) + msgStop()),
			want:   finish(llm.FinishStop),
			blocks: []llm.Block{text("ok")},
			usage:  &llm.Usage{InputTokens: 3512, OutputTokens: 2, CacheReadTokens: 3000, CacheWriteTokens: 500},
		},
		{
			name: "message_delta usage with input counts (newer API versions)",
			handler: sseBody(msgStart(12, 0) + startText(0) + textDelta(0, "ok") + blockStop(0) +
				ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":15,"cache_read_input_tokens":7,"output_tokens":9}}`) + msgStop()),
			want:   finish(llm.FinishStop),
			blocks: []llm.Block{text("ok")},
			usage:  &llm.Usage{InputTokens: 22, OutputTokens: 9, CacheReadTokens: 7},
		},
		{
			name:    "stop_sequence is stop",
			handler: sseBody(msgStart(1, 0) + startText(0) + textDelta(0, "a") + blockStop(0) + msgDelta("stop_sequence", 1) + msgStop()),
			want:    finish(llm.FinishStop),
			blocks:  []llm.Block{text("a")},
		},
		{
			name:    "absent stop reason with content is stop",
			handler: sseBody(msgStart(1, 0) + startText(0) + textDelta(0, "a") + blockStop(0) + msgDelta("", 1) + msgStop()),
			want:    finish(llm.FinishStop),
			blocks:  []llm.Block{text("a")},
		},
		{
			name:    "max_tokens",
			handler: sseBody(msgStart(1, 0) + startText(0) + textDelta(0, "cut") + blockStop(0) + msgDelta("max_tokens", 1) + msgStop()),
			want:    finish(llm.FinishMaxTokens),
			blocks:  []llm.Block{text("cut")},
		},
		{
			name:    "max_tokens with empty content stays max-tokens",
			handler: sseBody(msgStart(1, 0) + msgDelta("max_tokens", 0) + msgStop()),
			want:    finish(llm.FinishMaxTokens),
			// message_start's provisional output count of 1 is replaced by the
			// final (zero) one.
			usage: &llm.Usage{InputTokens: 1},
		},
		{
			name:    "refusal",
			handler: sseBody(msgStart(1, 0) + startText(0) + textDelta(0, "I can't") + blockStop(0) + msgDelta("refusal", 1) + msgStop()),
			want:    finish(llm.FinishRefusal),
			blocks:  []llm.Block{text("I can't")},
		},
		{
			name:    "pause_turn continues the step",
			handler: sseBody(msgStart(1, 0) + startText(0) + textDelta(0, "searching") + blockStop(0) + msgDelta("pause_turn", 1) + msgStop()),
			want:    finish(llm.FinishPause),
			blocks:  []llm.Block{text("searching")},
		},
		{
			name:    "model_context_window_exceeded beats empty",
			handler: sseBody(msgStart(1, 0) + msgDelta("model_context_window_exceeded", 0) + msgStop()),
			want:    failure(llm.CodeContextWindowExceeded),
		},
		{
			name:    "model_context_window_exceeded with content",
			handler: sseBody(msgStart(1, 0) + startText(0) + textDelta(0, "part") + blockStop(0) + msgDelta("model_context_window_exceeded", 1) + msgStop()),
			want:    failure(llm.CodeContextWindowExceeded),
			blocks:  []llm.Block{text("part")},
		},
		{
			name:    "unknown stop reason is an upper-cased code",
			handler: sseBody(msgStart(1, 0) + startText(0) + textDelta(0, "x") + blockStop(0) + msgDelta("brand_new_reason", 1) + msgStop()),
			want:    failure("BRAND_NEW_REASON"),
			blocks:  []llm.Block{text("x")},
		},

		// EMPTY_RESPONSE
		{
			name:    "empty end_turn",
			handler: sseBody(msgStart(1, 0) + msgDelta("end_turn", 0) + msgStop()),
			want:    failure(llm.CodeEmptyResponse),
		},
		{
			name:    "empty text block with end_turn",
			handler: sseBody(msgStart(1, 0) + startText(0) + textDelta(0, "") + blockStop(0) + msgDelta("end_turn", 0) + msgStop()),
			want:    failure(llm.CodeEmptyResponse),
			blocks:  []llm.Block{text("")},
		},
		{
			name:    "empty stop_sequence",
			handler: sseBody(msgStart(1, 0) + msgDelta("stop_sequence", 0) + msgStop()),
			want:    failure(llm.CodeEmptyResponse),
		},
		{
			name:    "absent stop reason and no content",
			handler: sseBody(msgStart(1, 0) + msgDelta("", 0) + msgStop()),
			want:    failure(llm.CodeEmptyResponse),
		},
		{
			name:    "no message_delta at all and no content",
			handler: sseBody(msgStart(1, 0) + msgStop()),
			want:    failure(llm.CodeEmptyResponse),
		},
		{
			name:    "200 with empty body",
			handler: sseBody(""),
			want:    failure(llm.CodeEmptyResponse),
		},

		// CONTEXT_WINDOW_EXCEEDED
		{
			name:    "400 prompt is too long beats empty",
			handler: status(400, nil, errorBody("invalid_request_error", "prompt is too long: 250123 tokens > 200000 maximum")),
			want:    failure(llm.CodeContextWindowExceeded),
			logged:  true,
		},
		{
			name:    "in-stream prompt is too long",
			handler: sseBody(msgStart(1, 0) + errorEvent("invalid_request_error", "prompt is too long: 250123 tokens > 200000 maximum "+canary)),
			want:    failure(llm.CodeContextWindowExceeded),
			logged:  true,
		},

		// STREAM_CLOSED
		{
			name:    "cut before message_stop",
			handler: sseBody(msgStart(1, 0) + startText(0) + textDelta(0, "partial") + blockStop(0) + msgDelta("end_turn", 1)),
			want:    failure(llm.CodeStreamClosed),
			blocks:  []llm.Block{text("partial")},
		},
		{
			name:    "cut mid-event",
			handler: sseBody(msgStart(1, 0) + startText(0) + textDelta(0, "partial") + "event: content_block_delta\ndata: {\"type\":\"content_"),
			want:    failure(llm.CodeStreamClosed),
			blocks:  []llm.Block{text("partial")},
		},
		{
			name: "connection closed before the promised length",
			handler: hijack("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 100000\r\n\r\n"+
				msgStart(1, 0)+startText(0)+textDelta(0, "partial"), false),
			want:   failure(llm.CodeStreamClosed),
			blocks: []llm.Block{text("partial")},
		},
		{
			name:    "comment-only body is a closed stream",
			handler: sseBody(": keep-alive\n\n"),
			want:    failure(llm.CodeStreamClosed),
		},

		// MALFORMED_RESPONSE
		{
			name:    "data that is not JSON",
			handler: sseBody(msgStart(1, 0) + startText(0) + textDelta(0, "ok") + "event: content_block_delta\ndata: {not json\n\n" + msgStop()),
			want:    failure(llm.CodeMalformedResponse),
			blocks:  []llm.Block{text("ok")},
		},
		{
			name:    "data that is JSON of the wrong shape",
			handler: sseBody(msgStart(1, 0) + ev("content_block_start", `[1,2,3]`) + msgStop()),
			want:    failure(llm.CodeMalformedResponse),
		},
		{
			name:    "delta for a block never started",
			handler: sseBody(msgStart(1, 0) + textDelta(3, "orphan") + msgStop()),
			want:    failure(llm.CodeMalformedResponse),
		},
		{
			name:    "delta of the wrong kind for its block",
			handler: sseBody(msgStart(1, 0) + startToolUse(0, "t", "n") + textDelta(0, "x") + msgStop()),
			want:    failure(llm.CodeMalformedResponse),
			blocks:  []llm.Block{{Type: llm.BlockToolCall, ID: "t", Name: "n"}},
		},
		{
			name:    "event larger than the line limit",
			handler: sseBody(msgStart(1, 0) + "event: content_block_delta\ndata: " + strings.Repeat("a", maxEventSize+1) + "\n\n" + msgStop()),
			want:    failure(llm.CodeMalformedResponse),
		},

		// In-stream error events
		{
			name:    "overloaded_error mid-stream after text",
			handler: sseBody(msgStart(1, 0) + startText(0) + textDelta(0, "Hello") + errorEvent("overloaded_error", "Overloaded "+canary)),
			want:    failure(llm.CodeServer),
			blocks:  []llm.Block{text("Hello")},
			logged:  true,
		},
		{
			name:    "api_error",
			handler: sseBody(msgStart(1, 0) + errorEvent("api_error", "Internal "+canary)),
			want:    failure(llm.CodeServer),
			logged:  true,
		},
		{
			name:    "rate_limit_error",
			handler: sseBody(msgStart(1, 0) + errorEvent("rate_limit_error", "slow down "+canary)),
			want:    failure(llm.CodeRateLimit),
			logged:  true,
		},
		{
			name:    "authentication_error",
			handler: sseBody(errorEvent("authentication_error", "bad key "+canary)),
			want:    failure(llm.CodeAuth),
			logged:  true,
		},
		{
			name:    "permission_error",
			handler: sseBody(errorEvent("permission_error", "no "+canary)),
			want:    failure(llm.CodeAuth),
			logged:  true,
		},
		{
			name:    "billing_error",
			handler: sseBody(errorEvent("billing_error", "credit balance is too low "+canary)),
			want:    failure(llm.CodeQuota),
			logged:  true,
		},
		{
			name:    "invalid_request_error",
			handler: sseBody(errorEvent("invalid_request_error", "messages: roles must alternate "+canary)),
			want:    failure(llm.CodeInvalidRequest),
			logged:  true,
		},

		// HTTP statuses
		{
			name:    "429 with Retry-After",
			handler: status(429, map[string]string{"Retry-After": "7"}, errorBody("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")),
			want:    llm.Finish{Kind: llm.FinishError, Code: llm.CodeRateLimit, RetryAfter: 7 * time.Second},
			logged:  true,
		},
		{
			name:    "529 overloaded",
			handler: status(529, nil, errorBody("overloaded_error", "Overloaded")),
			want:    failure(llm.CodeServer),
			logged:  true,
		},
		{
			name:    "500",
			handler: status(500, nil, errorBody("api_error", "Internal server error")),
			want:    failure(llm.CodeServer),
			logged:  true,
		},
		{
			name:    "401",
			handler: status(401, nil, errorBody("authentication_error", "invalid x-api-key")),
			want:    failure(llm.CodeAuth),
			logged:  true,
		},
		{
			name:    "403",
			handler: status(403, nil, errorBody("permission_error", "not allowed")),
			want:    failure(llm.CodeAuth),
			logged:  true,
		},
		{
			name:    "400",
			handler: status(400, nil, errorBody("invalid_request_error", "max_tokens: must be positive")),
			want:    failure(llm.CodeInvalidRequest),
			logged:  true,
		},
		{
			name:    "413",
			handler: status(413, nil, errorBody("request_too_large", "Request exceeds the maximum allowed number of bytes")),
			want:    failure(llm.CodeInvalidRequest),
			logged:  true,
		},
		{
			name:    "422",
			handler: status(422, nil, errorBody("invalid_request_error", "unprocessable")),
			want:    failure(llm.CodeInvalidRequest),
			logged:  true,
		},
		{
			name:    "402",
			handler: status(402, nil, errorBody("billing_error", "payment required")),
			want:    failure(llm.CodeQuota),
			logged:  true,
		},
		{
			name:    "400 billing_error",
			handler: status(400, nil, errorBody("billing_error", "Your credit balance is too low to access the Anthropic API")),
			want:    failure(llm.CodeQuota),
			logged:  true,
		},

		// TIMEOUT, TRANSPORT, ABORTED
		{
			name:     "idle timeout after headers",
			handler:  stall(true, msgStart(1, 0)+startText(0)+textDelta(0, "so far")),
			idle:     50 * time.Millisecond,
			want:     failure(llm.CodeTimeout),
			anyBlock: true,
		},
		{
			name:    "idle timeout before headers",
			handler: stall(false, ""),
			idle:    50 * time.Millisecond,
			want:    failure(llm.CodeTimeout),
		},
		{
			name: "connection refused",
			url:  refusedURL,
			want: failure(llm.CodeTransport),
		},
		{
			name: "connection reset",
			handler: hijack("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+
				httpChunk(msgStart(1, 0))+httpChunk(startText(0)), true),
			want:     failure(llm.CodeTransport),
			anyBlock: true,
		},
		{
			name:     "caller cancel mid-stream",
			handler:  stall(true, msgStart(1, 0)+startText(0)+textDelta(0, "so far")),
			cancelAt: 1,
			want:     aborted,
			anyBlock: true,
		},
		{
			name:     "caller cancelled before the call",
			handler:  sseBody(textReply("never")),
			cancelAt: -1,
			want:     aborted,
		},

		// Framing
		{
			name: "keep-alive comments and pings are ignored",
			handler: sseBody(": keep-alive\n\n" + msgStart(3, 0) + ping() + ": keep-alive\n" + startText(0) + ping() +
				":\n\n" + textDelta(0, "a") + ": keep-alive\n\n" + textDelta(0, "b") + blockStop(0) + ping() + msgDelta("end_turn", 2) + msgStop()),
			want:   finish(llm.FinishStop),
			blocks: []llm.Block{text("ab")},
		},
		{
			name:    "CRLF line endings",
			handler: sseBody(strings.ReplaceAll(textReply("crlf"), "\n", "\r\n")),
			want:    finish(llm.FinishStop),
			blocks:  []llm.Block{text("crlf")},
		},
		{
			name: "unknown events and block types are skipped",
			handler: sseBody(msgStart(1, 0) + ev("future_event", `{"type":"future_event"}`) +
				ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srv","name":"web_search","input":{}}}`) +
				jsonDelta(0, `{"q":1}`) + blockStop(0) +
				startText(1) + textDelta(1, "found") + ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"citations_delta","citation":{}}}`) + blockStop(1) +
				msgDelta("end_turn", 1) + msgStop()),
			want:   finish(llm.FinishStop),
			blocks: []llm.Block{text("found")},
		},
		{
			name:    "a text_delta line over 16 MiB arrives intact",
			handler: sseBody(msgStart(1, 0) + startText(0) + textDelta(0, big) + blockStop(0) + msgDelta("end_turn", 1) + msgStop()),
			want:    finish(llm.FinishStop),
			blocks:  []llm.Block{text(big)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			handler := tt.handler
			if handler == nil {
				handler = http.NotFoundHandler()
			}
			var hits atomic.Int32
			c, logs := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				handler.ServeHTTP(w, r)
			}))
			if tt.url != nil {
				c.BaseURL = tt.url(t)
				tr := &http.Transport{}
				t.Cleanup(tr.CloseIdleConnections)
				c.HTTP = &http.Client{Transport: tr}
			}
			c.IdleTimeout = tt.idle
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.cancelAt < 0 {
				cancel()
			}
			chunks := collect(t, ctx, c, simpleRequest(), func(n int) {
				if n == tt.cancelAt {
					cancel()
				}
			})

			got := *chunks[len(chunks)-1].Finish
			if got.Kind != tt.want.Kind || got.Code != tt.want.Code || got.RetryAfter != tt.want.RetryAfter {
				t.Errorf("finish = %+v, want %+v", got, tt.want)
			}
			if (got.Kind == llm.FinishError || got.Kind == llm.FinishAborted) && got.Message == "" {
				t.Errorf("failure finish without a message")
			}
			for _, ch := range chunks {
				if ch.Finish != nil && strings.Contains(ch.Finish.Message, canary) {
					t.Errorf("provider text leaked into finish message: %q", ch.Finish.Message)
				}
			}
			if tt.logged && !strings.Contains(logs.String(), canary) {
				t.Errorf("provider error text was not logged; logs:\n%s", logs)
			}
			a := assemble(chunks)
			if !tt.anyBlock {
				if diff := cmp.Diff(tt.blocks, a.Blocks(), cmpopts.EquateEmpty()); diff != "" {
					if len(diff) > 2000 {
						diff = diff[:2000] + "..."
					}
					t.Errorf("blocks (-want +got):\n%s", diff)
				}
			}
			if tt.usage != nil {
				if diff := cmp.Diff(*tt.usage, a.Usage()); diff != "" {
					t.Errorf("usage (-want +got):\n%s", diff)
				}
			}
			// One wire attempt per call. A short idle timeout may end the
			// attempt before the handler runs on a loaded machine, so those
			// rows only forbid a second attempt.
			switch n := hits.Load(); {
			case n > 1:
				t.Errorf("server saw %d requests, want one attempt", n)
			case n == 0 && tt.url == nil && tt.cancelAt >= 0 && tt.idle == 0:
				t.Errorf("server saw no request")
			}
		})
	}
}

// TestStreamSignatureOnBlockEnd pins where the signature travels: on the
// reasoning block's block-end chunk, not on a delta.
func TestStreamSignatureOnBlockEnd(t *testing.T) {
	c, _ := newServer(t, sseBody(msgStart(1, 0)+startThinking(0)+thinkingDelta(0, "hm")+signatureDelta(0, "SIG")+blockStop(0)+
		startText(1)+textDelta(1, "x")+blockStop(1)+msgDelta("end_turn", 1)+msgStop()))
	chunks := collect(t, t.Context(), c, simpleRequest(), nil)
	var ends []llm.Chunk
	for _, ch := range chunks {
		if ch.Type == llm.ChunkBlockEnd {
			ends = append(ends, ch)
		}
		if ch.Type != llm.ChunkBlockEnd && ch.Signature != "" {
			t.Errorf("signature on a %s chunk", ch.Type)
		}
	}
	want := []llm.Chunk{{Type: llm.ChunkBlockEnd, Index: 0, Signature: "SIG"}, {Type: llm.ChunkBlockEnd, Index: 1}}
	if diff := cmp.Diff(want, ends); diff != "" {
		t.Errorf("block-end chunks (-want +got):\n%s", diff)
	}
}

// TestStreamBreakClosesBody shows a consumer that stops early releases the
// connection: the server sees the client go away.
func TestStreamBreakClosesBody(t *testing.T) {
	gone := make(chan bool, 1)
	c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(msgStart(1, 0) + startText(0) + textDelta(0, "first")))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			gone <- true
		case <-time.After(30 * time.Second): // failsafe only; never the expected path
			gone <- false
		}
	}))
	n := 0
	for range c.Stream(t.Context(), simpleRequest()) {
		n++
		break
	}
	if n != 1 {
		t.Fatalf("got %d chunks before break", n)
	}
	if !<-gone {
		t.Error("server never saw the connection close after the consumer stopped")
	}
}
