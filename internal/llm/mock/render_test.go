package mock

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testUsage = &Usage{Input: 10, Output: 5, CacheRead: 3, Reasoning: 2}

const (
	oaUsageWant = "usage:10/5/cached=3/hit=3/reasoning=2"
	anStart     = "message_start:in=10:cache=3"
)

// TestStreams checks the exact event sequence of every stream-shaped
// reply and fault on both wires, over real HTTP.
func TestStreams(t *testing.T) {
	tests := []struct {
		name      string
		reply     Reply
		openai    []string
		anthropic []string
	}{
		{
			name:      "text",
			reply:     Reply{Text: "hello"},
			openai:    []string{"role", "text:hello", "finish:stop", oaUsageWant, "[DONE]"},
			anthropic: []string{anStart, "ping", "start:0:text", "text:hello", "stop:0", "delta:end_turn:out=5", "message_stop"},
		},
		{
			name:      "text chunked on rune boundaries",
			reply:     Reply{Text: "héllo", Chunk: 2},
			openai:    []string{"role", "text:h", "text:é", "text:ll", "text:o", "finish:stop", oaUsageWant, "[DONE]"},
			anthropic: []string{anStart, "ping", "start:0:text", "text:h", "text:é", "text:ll", "text:o", "stop:0", "delta:end_turn:out=5", "message_stop"},
		},
		{
			name:   "reasoning then text",
			reply:  Reply{Reasoning: "think", Text: "ok"},
			openai: []string{"role", "reasoning:think", "text:ok", "finish:stop", oaUsageWant, "[DONE]"},
			anthropic: []string{anStart, "ping", "start:0:thinking", "thinking:think", "signature", "stop:0",
				"start:1:text", "text:ok", "stop:1", "delta:end_turn:out=5", "message_stop"},
		},
		{
			name:   "reasoning only",
			reply:  Reply{Reasoning: "hmm", Chunk: 2},
			openai: []string{"role", "reasoning:hm", "reasoning:m", "finish:stop", oaUsageWant, "[DONE]"},
			anthropic: []string{anStart, "ping", "start:0:thinking", "thinking:hm", "thinking:m", "signature", "stop:0",
				"delta:end_turn:out=5", "message_stop"},
		},
		{
			name: "tool calls, scripted and generated ids, invalid JSON verbatim",
			reply: Reply{Text: "let me look", ToolCalls: []ToolCall{
				{ID: "call_x", Name: "read", Arguments: json.RawMessage(`{"path":"a.go"}`)},
				{Name: "ls", Arguments: json.RawMessage(`"{bad"`)},
				{Name: "pwd"},
			}},
			openai: []string{"role", "text:let me look",
				"tool:0:call_x:function:read", `args:0:{"path":"a.go"}`,
				"tool:1:call_1:function:ls", "args:1:{bad",
				"tool:2:call_2:function:pwd", "args:2:{}",
				"finish:tool_calls", oaUsageWant, "[DONE]"},
			anthropic: []string{anStart, "ping", "start:0:text", "text:let me look", "stop:0",
				"start:1:tool_use:call_x:read", "json:", `json:{"path":"a.go"}`, "stop:1",
				"start:2:tool_use:toolu_mock_1:ls", "json:", "json:{bad", "stop:2",
				"start:3:tool_use:toolu_mock_2:pwd", "json:", "json:{}", "stop:3",
				"delta:tool_use:out=5", "message_stop"},
		},
		{
			name:   "tool arguments split by chunk",
			reply:  Reply{ToolCalls: []ToolCall{{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a":1}`)}}, Chunk: 4},
			openai: []string{"role", "tool:0:c1:function:f", `args:0:{"a"`, "args:0::1}", "finish:tool_calls", oaUsageWant, "[DONE]"},
			anthropic: []string{anStart, "ping", "start:0:tool_use:c1:f", "json:", `json:{"a"`, "json::1}", "stop:0",
				"delta:tool_use:out=5", "message_stop"},
		},
		{
			name:   "short tool arguments still come in two pieces",
			reply:  Reply{ToolCalls: []ToolCall{{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a":1}`)}}, Chunk: 100},
			openai: []string{"role", "tool:0:c1:function:f", `args:0:{"a`, `args:0:":1}`, "finish:tool_calls", oaUsageWant, "[DONE]"},
			anthropic: []string{anStart, "ping", "start:0:tool_use:c1:f", "json:", `json:{"a`, `json:":1}`, "stop:0",
				"delta:tool_use:out=5", "message_stop"},
		},
		{
			name:      "finish none",
			reply:     Reply{Text: "x", Finish: "none"},
			openai:    []string{"role", "text:x", oaUsageWant, "[DONE]"},
			anthropic: []string{anStart, "ping", "start:0:text", "text:x", "stop:0", "delta:null:out=5", "message_stop"},
		},
		{
			name:      "finish raw",
			reply:     Reply{Text: "x", Finish: "length"},
			openai:    []string{"role", "text:x", "finish:length", oaUsageWant, "[DONE]"},
			anthropic: []string{anStart, "ping", "start:0:text", "text:x", "stop:0", "delta:length:out=5", "message_stop"},
		},
		{
			name:  "keep-alive before every event",
			reply: Reply{Text: "a", KeepAlive: true},
			openai: []string{":keep-alive", "role", ":keep-alive", "text:a", ":keep-alive", "finish:stop",
				":keep-alive", oaUsageWant, ":keep-alive", "[DONE]"},
			anthropic: []string{":keep-alive", anStart, ":keep-alive", "ping", ":keep-alive", "start:0:text",
				":keep-alive", "text:a", ":keep-alive", "stop:0", ":keep-alive", "delta:end_turn:out=5",
				":keep-alive", "message_stop"},
		},
		{
			name:      "echo",
			reply:     Reply{Text: "mock: ", Echo: true},
			openai:    []string{"role", "text:mock: hi there", "finish:stop", oaUsageWant, "[DONE]"},
			anthropic: []string{anStart, "ping", "start:0:text", "text:mock: hi there", "stop:0", "delta:end_turn:out=5", "message_stop"},
		},
		{
			name:      "fault empty",
			reply:     Reply{Text: "never sent", Reasoning: "nor this", ToolCalls: []ToolCall{{Name: "f"}}, Fault: FaultEmpty},
			openai:    []string{"role", "finish:stop", oaUsageWant, "[DONE]"},
			anthropic: []string{anStart, "delta:end_turn:out=5", "message_stop"},
		},
		{
			name:      "empty content without a fault",
			reply:     Reply{},
			openai:    []string{"role", "finish:stop", oaUsageWant, "[DONE]"},
			anthropic: []string{anStart, "ping", "delta:end_turn:out=5", "message_stop"},
		},
		{
			name:      "fault cut",
			reply:     Reply{Text: "partial", ToolCalls: []ToolCall{{ID: "c1", Name: "f", Arguments: json.RawMessage(`{}`)}}, Fault: FaultCut},
			openai:    []string{"role", "text:partial", "tool:0:c1:function:f", "args:0:{}"},
			anthropic: []string{anStart, "ping", "start:0:text", "text:partial", "stop:0", "start:1:tool_use:c1:f", "json:", "json:{}", "stop:1"},
		},
		{
			name:      "fault malformed",
			reply:     Reply{Text: "a", Fault: FaultMalformed},
			openai:    []string{"role", "text:a", "bad:{not json", "finish:stop", oaUsageWant, "[DONE]"},
			anthropic: []string{anStart, "ping", "start:0:text", "text:a", "stop:0", "bad:content_block_delta:{not json", "delta:end_turn:out=5", "message_stop"},
		},
	}
	for _, tt := range tests {
		for _, wire := range []string{WireOpenAI, WireAnthropic} {
			t.Run(tt.name+"/"+wire, func(t *testing.T) {
				r := tt.reply
				r.Usage = testUsage
				url, _, c := startTCP(t, &Script{Replies: []Reply{r}})
				resp, body := post(t, c, url, wire, bodyFor(wire, "hi there"))
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d: %s", resp.StatusCode, body)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
					t.Errorf("content-type %q", ct)
				}
				var got, want []string
				if wire == WireOpenAI {
					got, want = summarizeOpenAI(t, parseSSE(t, body)), tt.openai
				} else {
					got, want = summarizeAnthropic(t, parseSSE(t, body)), tt.anthropic
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("events (-want +got):\n%s", d)
				}
			})
		}
	}
}

func TestOverloadedAnthropicStream(t *testing.T) {
	url, _, c := startTCP(t, &Script{Replies: []Reply{{Text: "some", Fault: FaultOverloaded, Usage: testUsage}}})
	resp, body := post(t, c, url, WireAnthropic, anthropicBody("x"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	got := summarizeAnthropic(t, parseSSE(t, body))
	want := []string{anStart, "ping", "start:0:text", "text:some", "stop:0", "error:overloaded_error"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func TestUsageChunkOnlyWhenAsked(t *testing.T) {
	url, _, c := startTCP(t, &Script{Replies: []Reply{{Text: "a", Usage: testUsage}}})
	_, body := post(t, c, url, WireOpenAI, openAIBody("x", false))
	got := summarizeOpenAI(t, parseSSE(t, body))
	want := []string{"role", "text:a", "finish:stop", "[DONE]"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func TestEstimatedUsage(t *testing.T) {
	url, _, c := startTCP(t, &Script{Replies: []Reply{{Text: strings.Repeat("x", 40), Repeat: true}}})
	_, body := post(t, c, url, WireOpenAI, openAIBody("x", true))
	got := summarizeOpenAI(t, parseSSE(t, body))
	u := got[len(got)-2]
	if !strings.HasPrefix(u, "usage:") || strings.HasPrefix(u, "usage:0/") || !strings.Contains(u, "/10/") {
		t.Errorf("estimated usage %q: want nonzero input and 10 output tokens for 40 bytes", u)
	}
	_, body = post(t, c, url, WireAnthropic, anthropicBody("x"))
	evs := summarizeAnthropic(t, parseSSE(t, body))
	if evs[0] == "message_start:in=0:cache=0" || evs[len(evs)-2] != "delta:end_turn:out=10" {
		t.Errorf("estimated usage: %v", evs)
	}
}

// TestHTTPAnswers covers the replies that answer without a stream.
func TestHTTPAnswers(t *testing.T) {
	type want struct {
		status  int
		header  map[string]string
		body    string // exact, when set
		errType string // the JSON error type, when body is ""
		contain string
	}
	tests := []struct {
		name      string
		reply     Reply
		openai    want
		anthropic want
	}{
		{
			name:      "context window",
			reply:     Reply{Fault: FaultContextWindow},
			openai:    want{status: 400, errType: "invalid_request_error", contain: `"code":"context_length_exceeded"`},
			anthropic: want{status: 400, errType: "invalid_request_error", contain: "prompt is too long: 250000 tokens > 200000 maximum"},
		},
		{
			name:      "overloaded",
			reply:     Reply{Fault: FaultOverloaded},
			openai:    want{status: 529, errType: "server_error"},
			anthropic: want{status: 200, header: map[string]string{"Content-Type": "text/event-stream"}, contain: "overloaded_error"},
		},
		{
			name:      "status with headers and default body",
			reply:     Reply{Status: 429, Headers: map[string]string{"Retry-After": "7"}},
			openai:    want{status: 429, header: map[string]string{"Retry-After": "7", "Content-Type": "application/json"}, errType: "rate_limit_error"},
			anthropic: want{status: 429, header: map[string]string{"Retry-After": "7", "Content-Type": "application/json"}, errType: "rate_limit_error"},
		},
		{
			name:      "status 529 default body",
			reply:     Reply{Status: 529},
			openai:    want{status: 529, errType: "server_error"},
			anthropic: want{status: 529, errType: "overloaded_error"},
		},
		{
			name:      "status with scripted body",
			reply:     Reply{Status: 402, Body: `{"error":"insufficient balance"}`},
			openai:    want{status: 402, body: `{"error":"insufficient balance"}`},
			anthropic: want{status: 402, body: `{"error":"insufficient balance"}`},
		},
		{
			name:      "raw 200 body",
			reply:     Reply{Body: "data: [DONE]\n\n"},
			openai:    want{status: 200, header: map[string]string{"Content-Type": "text/event-stream"}, body: "data: [DONE]\n\n"},
			anthropic: want{status: 200, header: map[string]string{"Content-Type": "text/event-stream"}, body: "data: [DONE]\n\n"},
		},
		{
			name:      "empty body",
			reply:     Reply{Fault: FaultEmptyBody},
			openai:    want{status: 200, header: map[string]string{"Content-Type": "text/event-stream"}, body: ""},
			anthropic: want{status: 200, header: map[string]string{"Content-Type": "text/event-stream"}, body: ""},
		},
	}
	for _, tt := range tests {
		for _, wire := range []string{WireOpenAI, WireAnthropic} {
			t.Run(tt.name+"/"+wire, func(t *testing.T) {
				w := tt.openai
				if wire == WireAnthropic {
					w = tt.anthropic
				}
				url, _, c := startTCP(t, &Script{Replies: []Reply{tt.reply}})
				resp, body := post(t, c, url, wire, bodyFor(wire, "x"))
				if resp.StatusCode != w.status {
					t.Errorf("status %d, want %d", resp.StatusCode, w.status)
				}
				for k, v := range w.header {
					if got := resp.Header.Get(k); got != v {
						t.Errorf("header %s = %q, want %q", k, got, v)
					}
				}
				switch {
				case w.errType != "":
					if got := errorType(t, wire, body); got != w.errType {
						t.Errorf("error type %q, want %q in %s", got, w.errType, body)
					}
				case w.contain == "" && string(body) != w.body:
					t.Errorf("body %q, want %q", body, w.body)
				}
				if !strings.Contains(string(body), w.contain) {
					t.Errorf("body %s lacks %q", body, w.contain)
				}
			})
		}
	}
}

// errorType reads the error type from a wire's JSON error body.
func errorType(t *testing.T, wire string, body []byte) string {
	t.Helper()
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body is not JSON: %s", body)
	}
	if wire == WireAnthropic && e.Type != "error" {
		t.Errorf("anthropic error body without type error: %s", body)
	}
	if e.Error.Message == "" {
		t.Errorf("error body without message: %s", body)
	}
	return e.Error.Type
}

// TestHugeLine: a 16 MiB text with Chunk 0 is one data line on each wire,
// the adapters' line-length limit case.
func TestHugeLine(t *testing.T) {
	text := strings.Repeat("abcdefgh", (16<<20)/8)
	url, _, c := startTCP(t, &Script{Replies: []Reply{{Text: text, Repeat: true}}})
	for _, wire := range []string{WireOpenAI, WireAnthropic} {
		t.Run(wire, func(t *testing.T) {
			_, body := post(t, c, url, wire, bodyFor(wire, "x"))
			var lines, got int
			for _, ev := range parseSSE(t, body) {
				if !strings.Contains(ev.data, "abcdefgh") {
					continue
				}
				lines++
				if len(ev.data) <= 16<<20 {
					t.Errorf("line of %d bytes, want more than 16 MiB", len(ev.data))
				}
				got += strings.Count(ev.data, "abcdefgh")
			}
			if lines != 1 || got != (16<<20)/8 {
				t.Errorf("%d data lines carry %d copies; want 1 line with all %d", lines, got, (16<<20)/8)
			}
		})
	}
}

func TestPieces(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want []string
	}{
		{"", 3, nil},
		{"abc", 0, []string{"abc"}},
		{"abcdef", 4, []string{"abcd", "ef"}},
		{"日本", 1, []string{"日", "本"}},
		{"a日b", 2, []string{"a", "日", "b"}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, pieces(tt.s, tt.n)); d != "" {
			t.Errorf("pieces(%q, %d) (-want +got):\n%s", tt.s, tt.n, d)
		}
	}
	if d := cmp.Diff([]string{"日", "本"}, argPieces("日本", 50)); d != "" {
		t.Errorf("argPieces (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"x"}, argPieces("x", 50)); d != "" {
		t.Errorf("argPieces single rune (-want +got):\n%s", d)
	}
}

// TestResponsesNamespace: a scripted call's namespace is the Responses
// function_call's namespace (added and done items); the chat wire, which
// has none, sends the bare name.
func TestResponsesNamespace(t *testing.T) {
	yaml := "replies:\n  - toolCalls: [{namespace: mcp__reins, name: run, arguments: {prompt: hi}}]\n    repeat: true\n"
	sc, err := Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(sc)
	req := httptest.NewRequest(http.MethodPost, "/v1/responses", strings.NewReader(`{"model":"m","input":"go","stream":true}`))
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	var items []string
	for _, ev := range parseSSE(t, w.Body.Bytes()) {
		var e struct {
			Item *struct {
				Type, Name, Namespace, Arguments string
			} `json:"item"`
		}
		if json.Unmarshal([]byte(ev.data), &e) == nil && e.Item != nil && e.Item.Type == "function_call" {
			items = append(items, ev.name+" "+e.Item.Namespace+"/"+e.Item.Name+" "+e.Item.Arguments)
		}
	}
	want := []string{"response.output_item.added mcp__reins/run ", `response.output_item.done mcp__reins/run {"prompt":"hi"}`}
	if strings.Join(items, "\n") != strings.Join(want, "\n") {
		t.Errorf("function_call items:\n%s\nwant:\n%s", strings.Join(items, "\n"), strings.Join(want, "\n"))
	}
	if body := serve(t, srv, WireOpenAI, openAIBody("go", false)); strings.Contains(body, "mcp__reins") || !strings.Contains(body, `"name":"run"`) {
		t.Errorf("chat wire: %s", body)
	}
}
