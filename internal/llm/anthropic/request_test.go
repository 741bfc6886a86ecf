package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/enccache"
)

// captured is what the server received.
type captured struct {
	mu     sync.Mutex
	n      int
	path   string
	header http.Header
	body   []byte
}

func (c *captured) handler(reply string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.n++
		c.path, c.header, c.body = r.URL.Path, r.Header.Clone(), b
		c.mu.Unlock()
		sseBody(reply)(w, r)
	}
}

// sent runs req against a capturing server and returns the decoded body.
func sent(t *testing.T, req *llm.Request) (any, *captured) {
	t.Helper()
	capt := &captured{}
	c, _ := newServer(t, capt.handler(textReply("ok")))
	chunks := collect(t, t.Context(), c, req, nil)
	if f := chunks[len(chunks)-1].Finish; f.Kind != llm.FinishStop {
		t.Fatalf("finish = %+v", f)
	}
	var got any
	if err := json.Unmarshal(capt.body, &got); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, capt.body)
	}
	return got, capt
}

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad expected JSON: %v\n%s", err, s)
	}
	return v
}

func user(s string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: s}}}
}

func assistant(bs ...llm.Block) llm.Message { return llm.Message{Role: llm.RoleAssistant, Content: bs} }

func result(id, content string, isErr bool) llm.Message {
	return llm.Message{Role: llm.RoleTool, Content: []llm.Block{{Type: llm.BlockToolResult, CallID: id, Content: content, IsError: isErr}}}
}

func call(id, name, args string) llm.Block {
	return llm.Block{Type: llm.BlockToolCall, ID: id, Name: name, Arguments: args}
}

func TestRequestBody(t *testing.T) {
	tests := []struct {
		name string
		req  llm.Request
		want string
	}{
		{
			name: "system is top-level and max_tokens defaults",
			req:  llm.Request{Model: "claude-x", System: "Be brief.", Messages: []llm.Message{user("hi")}},
			want: `{"model":"claude-x","max_tokens":8192,"stream":true,"system":"Be brief.",
				"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`,
		},
		{
			name: "explicit max_tokens and no system",
			req:  llm.Request{Model: "claude-x", MaxTokens: 1234, Messages: []llm.Message{user("hi")}},
			want: `{"model":"claude-x","max_tokens":1234,"stream":true,
				"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`,
		},
		{
			name: "tools carry input_schema",
			req: llm.Request{Model: "m", Messages: []llm.Message{user("hi")}, Tools: []llm.ToolSpec{
				{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
				{Name: "now", Description: "Current time."},
				{Name: "ping", Description: "Ping.", Parameters: json.RawMessage(`null`)},
			}},
			want: `{"model":"m","max_tokens":8192,"stream":true,
				"tools":[
					{"name":"read","description":"Read a file.","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}},
					{"name":"now","description":"Current time.","input_schema":{"type":"object","properties":{}}},
					{"name":"ping","description":"Ping.","input_schema":{"type":"object","properties":{}}}],
				"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`,
		},
		{
			name: "assistant turn with thinking, text and tool uses; results merged into one user message",
			req: llm.Request{Model: "m", Messages: []llm.Message{
				user("look"),
				assistant(
					llm.Block{Type: llm.BlockReasoning, Text: "plan", Signature: "SIG1"},
					llm.Block{Type: llm.BlockText, Text: "Reading."},
					call("toolu_1", "read", `{"path":"a.go"}`),
					call("toolu_2", "read", `{"path": "b.go"`), // cut mid-JSON
				),
				result("toolu_1", "package a", false),
				result("toolu_2", "no such file", true),
				user("and?"),
			}},
			want: `{"model":"m","max_tokens":8192,"stream":true,"messages":[
				{"role":"user","content":[{"type":"text","text":"look"}]},
				{"role":"assistant","content":[
					{"type":"thinking","thinking":"plan","signature":"SIG1"},
					{"type":"text","text":"Reading."},
					{"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a.go"}},
					{"type":"tool_use","id":"toolu_2","name":"read","input":{}}]},
				{"role":"user","content":[
					{"type":"tool_result","tool_use_id":"toolu_1","content":"package a","is_error":false},
					{"type":"tool_result","tool_use_id":"toolu_2","content":"no such file","is_error":true},
					{"type":"text","text":"and?"}]}]}`,
		},
		{
			name: "tool arguments that are JSON but not an object become {}",
			req: llm.Request{Model: "m", Messages: []llm.Message{
				user("go"), assistant(call("t1", "f", `[1,2]`), call("t2", "g", ``), call("t3", "h", `null`)),
				result("t1", "a", false), result("t2", "b", false), result("t3", "c", false),
			}},
			want: `{"model":"m","max_tokens":8192,"stream":true,"messages":[
				{"role":"user","content":[{"type":"text","text":"go"}]},
				{"role":"assistant","content":[
					{"type":"tool_use","id":"t1","name":"f","input":{}},
					{"type":"tool_use","id":"t2","name":"g","input":{}},
					{"type":"tool_use","id":"t3","name":"h","input":{}}]},
				{"role":"user","content":[
					{"type":"tool_result","tool_use_id":"t1","content":"a","is_error":false},
					{"type":"tool_result","tool_use_id":"t2","content":"b","is_error":false},
					{"type":"tool_result","tool_use_id":"t3","content":"c","is_error":false}]}]}`,
		},
		{
			name: "unsigned reasoning is omitted, redacted thinking round-trips, empty text dropped",
			req: llm.Request{Model: "m", Messages: []llm.Message{
				user("q"),
				assistant(
					llm.Block{Type: llm.BlockReasoning, Text: "no signature"},
					llm.Block{Type: llm.BlockReasoning, Signature: redactedPrefix + "OPAQUE"},
					llm.Block{Type: llm.BlockText, Text: ""},
					llm.Block{Type: llm.BlockText, Text: "A."},
				),
			}},
			want: `{"model":"m","max_tokens":8192,"stream":true,"messages":[
				{"role":"user","content":[{"type":"text","text":"q"}]},
				{"role":"assistant","content":[
					{"type":"redacted_thinking","data":"OPAQUE"},
					{"type":"text","text":"A."}]}]}`,
		},
		{
			name: "an assistant message with nothing sendable disappears and roles still alternate",
			req: llm.Request{Model: "m", Messages: []llm.Message{
				user("one"),
				assistant(llm.Block{Type: llm.BlockReasoning, Text: "unsigned"}),
				user("two"),
				assistant(llm.Block{Type: llm.BlockText, Text: "x"}),
				assistant(llm.Block{Type: llm.BlockText, Text: "y"}),
			}},
			want: `{"model":"m","max_tokens":8192,"stream":true,"messages":[
				{"role":"user","content":[{"type":"text","text":"one"},{"type":"text","text":"two"}]},
				{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]}]}`,
		},
		{
			name: "results after user text move first",
			req: llm.Request{Model: "m", Messages: []llm.Message{
				user("go"), assistant(call("t1", "f", `{}`)), user("note"), result("t1", "r", false),
			}},
			want: `{"model":"m","max_tokens":8192,"stream":true,"messages":[
				{"role":"user","content":[{"type":"text","text":"go"}]},
				{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},
				{"role":"user","content":[
					{"type":"tool_result","tool_use_id":"t1","content":"r","is_error":false},
					{"type":"text","text":"note"}]}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := sent(t, &tt.req)
			// The breakpoints have their own test (TestCacheBreakpoints).
			if diff := cmp.Diff(decode(t, tt.want), withoutCache(got)); diff != "" {
				t.Errorf("request body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequestHeaders(t *testing.T) {
	_, capt := sent(t, simpleRequest())
	if capt.n != 1 {
		t.Fatalf("server saw %d requests", capt.n)
	}
	if capt.path != "/v1/messages" {
		t.Errorf("path = %q, want /v1/messages", capt.path)
	}
	for k, want := range map[string]string{
		"X-Api-Key":         "sk-test",
		"Anthropic-Version": "2023-06-01",
		"Content-Type":      "application/json",
		"Accept":            "text/event-stream",
	} {
		if got := capt.header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	if capt.header.Get("Authorization") != "" {
		t.Errorf("Authorization header sent; Anthropic uses x-api-key")
	}
}

func TestRequestBaseURLTrailingSlash(t *testing.T) {
	capt := &captured{}
	c, _ := newServer(t, capt.handler(textReply("ok")))
	c.BaseURL += "/"
	collect(t, t.Context(), c, simpleRequest(), nil)
	if capt.path != "/v1/messages" {
		t.Errorf("path = %q, want /v1/messages", capt.path)
	}
}

// TestRequestInvalidToolSchema fails before any HTTP attempt.
func TestRequestInvalidToolSchema(t *testing.T) {
	capt := &captured{}
	c, _ := newServer(t, capt.handler(textReply("ok")))
	req := simpleRequest()
	req.Tools = []llm.ToolSpec{{Name: "bad", Parameters: json.RawMessage(`{"type":`)}}
	chunks := collect(t, t.Context(), c, req, nil)
	f := chunks[len(chunks)-1].Finish
	if f.Kind != llm.FinishError || f.Code != llm.CodeInvalidRequest {
		t.Errorf("finish = %+v, want INVALID_REQUEST", f)
	}
	if capt.n != 0 {
		t.Errorf("server saw %d requests, want none", capt.n)
	}
}

// TestReasoningRoundTrip streams signed and redacted thinking, assembles the
// response, and sends it back as history: the signature and the redacted
// data must reach the next request unchanged.
func TestReasoningRoundTrip(t *testing.T) {
	c, _ := newServer(t, sseBody(msgStart(1, 0)+
		startThinking(0)+thinkingDelta(0, "step one")+signatureDelta(0, "ErUBCkYIAxgCIkB")+blockStop(0)+
		startRedacted(1, "EmwKAhgBEgy3va3pzix/LafPsn4a")+blockStop(1)+
		startToolUse(2, "toolu_7", "ls")+jsonDelta(2, `{"dir":"."}`)+blockStop(2)+
		msgDelta("tool_use", 5)+msgStop()))
	blocks := assemble(collect(t, t.Context(), c, simpleRequest(), nil)).Blocks()

	got, _ := sent(t, &llm.Request{Model: "m", Messages: []llm.Message{
		user("hi"),
		{Role: llm.RoleAssistant, Content: blocks},
		result("toolu_7", "a.go", false),
	}})
	want := decode(t, `{"model":"m","max_tokens":8192,"stream":true,"messages":[
		{"role":"user","content":[{"type":"text","text":"hi"}]},
		{"role":"assistant","content":[
			{"type":"thinking","thinking":"step one","signature":"ErUBCkYIAxgCIkB"},
			{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"},
			{"type":"tool_use","id":"toolu_7","name":"ls","input":{"dir":"."}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_7","content":"a.go","is_error":false}]}]}`)
	if diff := cmp.Diff(want, withoutCache(got)); diff != "" {
		t.Errorf("round-trip request (-want +got):\n%s", diff)
	}
}

// withoutCache returns a decoded body without its cache breakpoints: no
// cache_control members, and a system prompt of one text block as the
// plain string it stands for.
func withoutCache(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k != "cache_control" {
				out[k] = withoutCache(e)
			}
		}
		if sys, ok := out["system"].([]any); ok && len(sys) == 1 {
			out["system"] = sys[0].(map[string]any)["text"]
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutCache(e)
		}
		return out
	}
	return v
}

// breakpoints lists where a body's cache_control marks are: "system",
// "tool N", "message N block M".
func breakpoints(t *testing.T, body []byte) []string {
	t.Helper()
	var w struct {
		System   []map[string]any `json:"system"`
		Tools    []map[string]any `json:"tools"`
		Messages []struct {
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatalf("body: %v", err)
	}
	var out []string
	for _, b := range w.System {
		if b["cache_control"] != nil {
			out = append(out, "system")
		}
	}
	for i, b := range w.Tools {
		if b["cache_control"] != nil {
			out = append(out, fmt.Sprintf("tool %d", i))
		}
	}
	for i, m := range w.Messages {
		for j, b := range m.Content {
			if b["cache_control"] != nil {
				if b["type"] == "thinking" || b["type"] == "redacted_thinking" {
					t.Errorf("a breakpoint on a %s block", b["type"])
				}
				out = append(out, fmt.Sprintf("message %d block %d", i, j))
			}
		}
	}
	return out
}

func TestCacheBreakpoints(t *testing.T) {
	tools := []llm.ToolSpec{{Name: "a"}, {Name: "b"}}
	loop := []llm.Message{user("go"), assistant(call("t1", "a", `{}`)), result("t1", "r1", false),
		assistant(llm.Block{Type: llm.BlockReasoning, Text: "x", Signature: "S"}, call("t2", "b", `{}`)), result("t2", "r2", false)}
	tests := []struct {
		name string
		req  llm.Request
		want []string
	}{
		{"nothing but one message", llm.Request{Messages: []llm.Message{user("hi")}}, []string{"message 0 block 0"}},
		{"system, tools, one message", llm.Request{System: "s", Tools: tools, Messages: []llm.Message{user("hi")}},
			[]string{"system", "tool 1", "message 0 block 0"}},
		{"a tool loop: the last two user messages", llm.Request{System: "s", Tools: tools, Messages: loop},
			[]string{"system", "tool 1", "message 2 block 0", "message 4 block 0"}},
		{"ending in an assistant message (pause_turn): the user messages before it", llm.Request{Messages: append(loop, assistant(llm.Block{Type: llm.BlockReasoning, Text: "y", Signature: "S2"}))},
			[]string{"message 2 block 0", "message 4 block 0"}},
		{"merged results: the last block", llm.Request{Messages: []llm.Message{user("go"), assistant(call("t1", "a", `{}`), call("t2", "a", `{}`)), result("t1", "r", false), result("t2", "r", false), user("note")}},
			[]string{"message 0 block 0", "message 2 block 2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, capt := sent(t, &tt.req)
			got := breakpoints(t, capt.body)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("breakpoints (-want +got):\n%s", diff)
			}
			if len(got) < 1 || len(got) > MaxBreakpoints {
				t.Errorf("%d breakpoints", len(got))
			}
		})
	}
}

// TestEncodingReusedAndStable: a request that extends the previous one
// encodes only the new messages, and every message is the same bytes as
// before, so the provider's cache sees the same prefix.
func TestEncodingReusedAndStable(t *testing.T) {
	var cache enccache.Cache[encodedMessage]
	h := []llm.Message{user("go")}
	var prev []byte
	for i := range 30 {
		id := fmt.Sprintf("t%d", i)
		h = append(h, assistant(call(id, "a", `{"n":1}`)), result(id, strings.Repeat("<r>", i), false))
		body, err := encodeRequest(&llm.Request{Model: "m", System: "s", Messages: h}, &cache)
		if err != nil {
			t.Fatal(err)
		}
		fresh, _ := encodeRequest(&llm.Request{Model: "m", System: "s", Messages: h}, nil)
		if !bytes.Equal(body, fresh) {
			t.Fatalf("step %d: the cached encoding differs from a fresh one", i)
		}
		// Up to the previous request's second-last breakpoint, the bytes
		// are the previous request's.
		if prev != nil {
			cut := bytes.LastIndex(prev, []byte(cacheControl))
			cut = bytes.LastIndex(prev[:cut], []byte(cacheControl)) - 1 // its comma
			if !bytes.Equal(body[:cut], prev[:cut]) {
				t.Fatalf("step %d: the prefix changed", i)
			}
		}
		prev = body
	}
	if n := cache.Len(); n != len(h) {
		t.Fatalf("the cache holds %d entries for %d messages", n, len(h))
	}
}
