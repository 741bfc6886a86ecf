package openai

import (
	"bytes"
	"context"
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
	method, path string
	header       http.Header
	body         any
}

// capture serves a short valid stream and hands the request to the test.
func capture(t *testing.T, c *Client, req *llm.Request) captured {
	t.Helper()
	got := make(chan captured, 1)
	c2, _ := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		var body any
		if err == nil {
			err = json.Unmarshal(raw, &body)
		}
		if err != nil {
			t.Errorf("request body is not JSON: %v\n%s", err, raw)
		}
		got <- captured{r.Method, r.URL.Path, r.Header.Clone(), body}
		streamOK(events(text("ok"), finishWith("stop"), done))(w, r)
	}))
	c.HTTP = c2.HTTP
	if c.BaseURL == "" {
		c.BaseURL = c2.BaseURL
	} else {
		c.BaseURL = c2.BaseURL + c.BaseURL // a suffix such as "/"
	}
	if r := collect(t, context.Background(), c, req); r.fin.Kind != llm.FinishStop {
		t.Fatalf("finish = %+v, want stop", r.fin)
	}
	return <-got
}

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// history is a tool-using conversation exercising every message shape.
var history = &llm.Request{
	Model:     "deepseek-chat",
	System:    "You are terse.",
	MaxTokens: 512,
	Tools: []llm.ToolSpec{
		{Name: "read", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "now", Description: "Current time"},
	},
	Messages: []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "read a.go"}}},
		{Role: llm.RoleAssistant, Content: []llm.Block{
			{Type: llm.BlockReasoning, Text: "Need the file."},
			{Type: llm.BlockText, Text: "Reading."},
			{Type: llm.BlockToolCall, ID: "call_1", Name: "read", Arguments: `{"path":"a.go"}`},
			{Type: llm.BlockToolCall, ID: "call_2", Name: "now"},
		}},
		{Role: llm.RoleTool, Content: []llm.Block{
			{Type: llm.BlockToolResult, CallID: "call_1", Content: "package a"},
			{Type: llm.BlockToolResult, CallID: "call_2", Content: "no clock", IsError: true},
		}},
		{Role: llm.RoleAssistant, Content: []llm.Block{
			{Type: llm.BlockReasoning, Text: "Got it."},
			{Type: llm.BlockToolCall, ID: "call_3", Name: "read", Arguments: `{"path":"b.go"}`},
		}},
		{Role: llm.RoleTool, Content: []llm.Block{{Type: llm.BlockToolResult, CallID: "call_3", Content: ""}}},
		{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: "It is package a."}}},
		{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "thanks"}}},
	},
}

func TestRequestBody(t *testing.T) {
	const tools = `[
		{"type":"function","function":{"name":"read","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},
		{"type":"function","function":{"name":"now","description":"Current time","parameters":{"type":"object","properties":{}}}}
	]`
	messages := func(reasoning1, reasoning2 string) string {
		return `[
			{"role":"system","content":"You are terse."},
			{"role":"user","content":"read a.go"},
			{"role":"assistant","content":"Reading.",` + reasoning1 + `"tool_calls":[
				{"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.go\"}"}},
				{"id":"call_2","type":"function","function":{"name":"now","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"call_1","content":"package a"},
			{"role":"tool","tool_call_id":"call_2","content":"no clock"},
			{"role":"assistant","content":null,` + reasoning2 + `"tool_calls":[
				{"id":"call_3","type":"function","function":{"name":"read","arguments":"{\"path\":\"b.go\"}"}}]},
			{"role":"tool","tool_call_id":"call_3","content":""},
			{"role":"assistant","content":"It is package a."},
			{"role":"user","content":"thanks"}
		]`
	}
	tests := []struct {
		name     string
		provider string
		want     string
	}{
		{
			name:     "deepseek sends reasoning_content back",
			provider: "deepseek",
			want: `{"model":"deepseek-chat","stream":true,"stream_options":{"include_usage":true},"max_tokens":512,
				"messages":` + messages(`"reasoning_content":"Need the file.",`, `"reasoning_content":"Got it.",`) + `,
				"tools":` + tools + `}`,
		},
		{
			name:     "openai sends no reasoning",
			provider: "openai",
			want: `{"model":"deepseek-chat","stream":true,"stream_options":{"include_usage":true},"max_tokens":512,
				"messages":` + messages("", "") + `,
				"tools":` + tools + `}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := capture(t, &Client{APIKey: "sk-test", Provider: tt.provider}, history)
			if diff := cmp.Diff(decode(t, tt.want), got.body); diff != "" {
				t.Errorf("request body (-want +got):\n%s", diff)
			}
			if got.method != http.MethodPost || got.path != "/chat/completions" {
				t.Errorf("request = %s %s, want POST /chat/completions", got.method, got.path)
			}
			for k, want := range map[string]string{
				"Authorization": "Bearer sk-test",
				"Content-Type":  "application/json",
				"Accept":        "text/event-stream",
			} {
				if v := got.header.Get(k); v != want {
					t.Errorf("header %s = %q, want %q", k, v, want)
				}
			}
		})
	}
}

func TestRequestMinimal(t *testing.T) {
	// No key, no max tokens, no tools, a base URL with a trailing slash.
	got := capture(t, &Client{BaseURL: "/", Provider: "deepseek"}, &llm.Request{
		Model: "llama3",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "hi"}}},
			{Role: llm.RoleAssistant},
			{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "again"}}},
		},
	})
	want := decode(t, `{"model":"llama3","stream":true,"stream_options":{"include_usage":true},
		"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":""},{"role":"user","content":"again"}]}`)
	if diff := cmp.Diff(want, got.body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	if got.path != "/chat/completions" {
		t.Errorf("path = %q", got.path)
	}
	if v, ok := got.header["Authorization"]; ok {
		t.Errorf("Authorization sent without a key: %q", v)
	}
}

func TestRequestNotEncodable(t *testing.T) {
	c, _ := newClient(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("a request that cannot be encoded must not be sent")
	}))
	r := collect(t, context.Background(), c, &llm.Request{
		Model: "m",
		Tools: []llm.ToolSpec{{Name: "bad", Parameters: json.RawMessage(`{not json`)}},
	})
	if r.fin.Code != llm.CodeInvalidRequest || strings.Contains(r.fin.Message, "not json") {
		t.Fatalf("finish = %+v, want INVALID_REQUEST with a fixed message", r.fin)
	}
}

// TestEncodingReusedAndStable: a request that extends the previous one
// starts with the previous one's bytes (the automatic prompt caches of
// OpenAI and DeepSeek match an exact prefix), its messages come from the
// cache, and the cached encoding is the fresh one.
func TestEncodingReusedAndStable(t *testing.T) {
	for _, deepseek := range []bool{false, true} {
		var cache enccache.Cache[[]byte]
		var keep kept
		var prevKept bool
		var prevFirst *byte
		var prevCap int
		system := "sys"
		h := []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "go <&>"}}}}
		tools := []llm.ToolSpec{{Name: "read", Parameters: json.RawMessage(`{"type":"object"}`)}}
		var prev []byte
		for i := range 30 {
			id := fmt.Sprintf("c%d", i)
			h = append(h,
				llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockReasoning, Text: "think"}, {Type: llm.BlockToolCall, ID: id, Name: "read", Arguments: `{"path":"a"}`}}},
				llm.Message{Role: llm.RoleTool, Content: []llm.Block{{Type: llm.BlockToolResult, CallID: id, Content: strings.Repeat("é", i)}}})
			req := &llm.Request{Model: "m", System: system, Messages: h, Tools: tools, MaxTokens: 100}
			enc, err := encodeRequest(req, deepseek, &cache, &keep)
			if err != nil {
				t.Fatal(err)
			}
			body := enc.body
			freshEnc, _ := encodeRequest(req, deepseek, nil, nil)
			fresh := freshEnc.body
			if !bytes.Equal(body, fresh) {
				t.Fatalf("step %d: the cached encoding differs from a fresh one:\n%s\n%s", i, body, fresh)
			}
			if string(body[enc.msgEnd:enc.msgEnd+2]) != "]," {
				t.Fatalf("step %d: msgEnd %d is not the end of the messages", i, enc.msgEnd)
			}
			if !json.Valid(body) {
				t.Fatalf("step %d: not JSON: %s", i, body)
			}
			if prev != nil && i%7 != 0 {
				end := bytes.Index(prev, []byte(`],"stream":true`))
				if !bytes.HasPrefix(body, prev[:end]) {
					t.Fatalf("step %d: the previous request's messages are not a prefix", i)
				}
			}
			// The previous body is kept only when it was sent whole (every
			// third step here it is not), and then appended to in place.
			wasKept := i%3 != 2
			if wasKept {
				keep.put(enc)
			}
			prev = append([]byte(nil), body...)
			if i > 0 && prevKept && len(enc.body) <= prevCap && &enc.body[0] != prevFirst {
				t.Fatalf("step %d: the kept body was copied, not extended", i)
			}
			prevKept, prevFirst, prevCap = wasKept, &enc.body[0], cap(enc.body)
			if i%7 == 6 {
				// Another system prompt: nothing of the kept body is reused.
				system += "!"
			}
		}
		if n := cache.Len(); n != len(h) {
			t.Fatalf("the cache holds %d entries for %d messages", n, len(h))
		}
	}
}

// TestKeptBodyOverHTTP: a session's requests over real HTTP, each built on
// the previous one's kept bytes, arrive exactly as a fresh encoding; a
// request that fails before its body is read (the server answers at once)
// leaves nothing kept, and the next request is still right.
func TestKeptBodyOverHTTP(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	n := 0
	c, _ := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		if k%5 == 0 { // refuse without reading the body
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, raw)
		mu.Unlock()
		streamOK(events(text("ok"), finishWith("stop"), done))(w, r)
	}))
	h := []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "go"}}}}
	for i := range 25 {
		id := fmt.Sprintf("c%d", i)
		h = append(h,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolCall, ID: id, Name: "read", Arguments: `{}`}}},
			llm.Message{Role: llm.RoleTool, Content: []llm.Block{{Type: llm.BlockToolResult, CallID: id, Content: strings.Repeat("x", 100*i)}}})
		req := &llm.Request{Model: "m", System: "s", Messages: h}
		mu.Lock()
		before := len(bodies)
		mu.Unlock()
		collect(t, context.Background(), c, req)
		mu.Lock()
		got := bodies[before:]
		mu.Unlock()
		if len(got) == 0 {
			continue // refused
		}
		want, _ := encodeRequest(req, false, nil, nil)
		if !bytes.Equal(got[0], want.body) {
			t.Fatalf("request %d differs from a fresh encoding:\n%s\n%s", i, got[0], want.body)
		}
	}
}
