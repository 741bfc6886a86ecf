package gemini

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/llmtest"
	"github.com/reinsdev/reins/internal/llm/mock"
)

// The transcripts below are a second, independent fake: written from the
// public Gemini API reference (GenerateContentResponse, its SSE framing
// with \r\n, the streaming and function-calling examples), not from
// reins's mock server.

func data(s string) string { return "data: " + s + "\r\n\r\n" }

const (
	docText1   = `{"candidates": [{"content": {"parts": [{"text": "The"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 8,"totalTokenCount": 8},"modelVersion": "gemini-2.5-flash"}`
	docText2   = `{"candidates": [{"content": {"parts": [{"text": " sky is blue."}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 8,"candidatesTokenCount": 5,"totalTokenCount": 40,"cachedContentTokenCount": 2,"thoughtsTokenCount": 27},"modelVersion": "gemini-2.5-flash","responseId": "abc"}`
	docThought = `{"candidates": [{"content": {"parts": [{"text": "**Considering the weather**\n\nThe user wants...","thought": true}],"role": "model"},"index": 0}]}`
	docCall    = `{"candidates": [{"content": {"parts": [{"functionCall": {"name": "get_current_weather","args": {"location": "Boston, MA"}},"thoughtSignature": "CiQBVKhc7opaque"}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": 71,"candidatesTokenCount": 20,"totalTokenCount": 150,"thoughtsTokenCount": 59}}`
)

func docServer(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || r.URL.Query().Get("alt") != "sse" || r.Header.Get("X-Goog-Api-Key") != "g-key" {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"code":404,"message":"wrong path or key","status":"NOT_FOUND"}}`)
			return
		}
		if status != http.StatusOK {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, body)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func run(t *testing.T, url string, req *llm.Request) ([]llm.Chunk, *llm.Assembler) {
	t.Helper()
	c := &Client{BaseURL: url, APIKey: "g-key"}
	var chunks []llm.Chunk
	for ch := range c.Stream(context.Background(), req) {
		chunks = append(chunks, ch)
	}
	return chunks, llmtest.Assemble(chunks)
}

func TestDocsFake(t *testing.T) {
	finish := func(reason string) string {
		return data(`{"candidates": [{"content": {"parts": [{"text": ""}],"role": "model"},"finishReason": "` + reason + `","index": 0}]}`)
	}
	tests := []struct {
		name   string
		status int
		body   string
		kind   llm.FinishKind
		code   llm.Code
		text   string
	}{
		{name: "text", body: data(docText1) + data(docText2), kind: llm.FinishStop, text: "The sky is blue."},
		{name: "thought then a function call", body: data(docThought) + data(docCall), kind: llm.FinishToolCalls},
		{name: "keep-alive comments", body: ": ping\r\n\r\n" + data(docText1) + ": ping\r\n\r\n" + data(docText2), kind: llm.FinishStop, text: "The sky is blue."},
		{name: "MAX_TOKENS", body: data(docText1) + finish("MAX_TOKENS"), kind: llm.FinishMaxTokens, text: "The"},
		{name: "SAFETY is a refusal", body: data(docText1) + finish("SAFETY"), kind: llm.FinishRefusal},
		{name: "RECITATION is a refusal", body: data(docText1) + finish("RECITATION"), kind: llm.FinishRefusal},
		{name: "prompt blocked", body: data(`{"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},"usageMetadata": {"promptTokenCount": 9}}`), kind: llm.FinishRefusal},
		{name: "MALFORMED_FUNCTION_CALL is an error", body: finish("MALFORMED_FUNCTION_CALL"), kind: llm.FinishError, code: "MALFORMED_FUNCTION_CALL"},
		{name: "STOP without content", body: finish("STOP"), kind: llm.FinishError, code: llm.CodeEmptyResponse},
		{name: "cut before a finishReason", body: data(docText1), kind: llm.FinishError, code: llm.CodeStreamClosed, text: "The"},
		{name: "empty body", body: "", kind: llm.FinishError, code: llm.CodeEmptyResponse},
		{name: "not JSON", body: data(docText1) + data("{oops"), kind: llm.FinishError, code: llm.CodeMalformedResponse},
		{name: "error in the stream: overloaded", body: data(docText1) + data(`{"error": {"code": 503,"message": "The model is overloaded. Please try again later.","status": "UNAVAILABLE"}}`), kind: llm.FinishError, code: llm.CodeServer, text: "The"},
		{name: "error in the stream: quota", body: data(`{"error": {"code": 429,"message": "Resource has been exhausted (e.g. check quota).","status": "RESOURCE_EXHAUSTED"}}`), kind: llm.FinishError, code: llm.CodeRateLimit},
		{name: "HTTP 400 input too long", status: 400, body: `{"error": {"code": 400,"message": "The input token count (1250000) exceeds the maximum number of tokens allowed (1048576).","status": "INVALID_ARGUMENT"}}`, kind: llm.FinishError, code: llm.CodeContextWindowExceeded},
		{name: "HTTP 400 API key not valid", status: 400, body: `{"error": {"code": 400,"message": "API key not valid. Please pass a valid API key.","status": "INVALID_ARGUMENT"}}`, kind: llm.FinishError, code: llm.CodeInvalidRequest},
		{name: "HTTP 429", status: 429, body: `{"error": {"code": 429,"message": "Resource has been exhausted","status": "RESOURCE_EXHAUSTED"}}`, kind: llm.FinishError, code: llm.CodeRateLimit},
		{name: "HTTP 503", status: 503, body: `{"error": {"code": 503,"message": "The model is overloaded.","status": "UNAVAILABLE"}}`, kind: llm.FinishError, code: llm.CodeServer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status := tc.status
			if status == 0 {
				status = http.StatusOK
			}
			chunks, asm := run(t, docServer(t, status, tc.body), simpleRequest())
			if n := len(chunks); n == 0 || chunks[n-1].Type != llm.ChunkFinish {
				t.Fatalf("stream does not end with a finish")
			}
			f := asm.Finish()
			if f.Kind != tc.kind || f.Code != tc.code {
				t.Fatalf("finish %s %s (%s), want %s %s", f.Kind, f.Code, f.Message, tc.kind, tc.code)
			}
			if tc.text != "" && llm.BlocksText(asm.Blocks()) != tc.text {
				t.Errorf("text %q, want %q", llm.BlocksText(asm.Blocks()), tc.text)
			}
		})
	}
}

func TestDocsFakeCallSignatureAndUsage(t *testing.T) {
	_, asm := run(t, docServer(t, http.StatusOK, data(docThought)+data(docCall)), simpleRequest())
	bs := asm.Blocks()
	if len(bs) != 2 || bs[0].Type != llm.BlockReasoning || bs[1].Type != llm.BlockToolCall {
		t.Fatalf("blocks %+v, want reasoning then tool-call", bs)
	}
	if bs[1].Name != "get_current_weather" || bs[1].Arguments != `{"location": "Boston, MA"}` || bs[1].Signature != "CiQBVKhc7opaque" || bs[1].ID == "" {
		t.Errorf("tool call %+v", bs[1])
	}
	u := asm.Usage()
	if u.InputTokens != 71 || u.OutputTokens != 79 || u.ReasoningTokens != 59 {
		t.Errorf("usage %+v, want in 71 out 20+59 reasoning 59", u)
	}
	_, asm = run(t, docServer(t, http.StatusOK, data(docText1)+data(docText2)), simpleRequest())
	if u := asm.Usage(); u.InputTokens != 8 || u.OutputTokens != 32 || u.CacheReadTokens != 2 || u.ReasoningTokens != 27 {
		t.Errorf("usage %+v, want in 8 out 5+27 cached 2 reasoning 27", u)
	}
}

// TestToolLoopAgainstMock runs two steps against the mock: the call goes
// back as a functionCall part with its thought signature, its result as a
// functionResponse named for the function, and the turns alternate.
func TestToolLoopAgainstMock(t *testing.T) {
	url, srv, stop := mock.StartTest(&mock.Script{Replies: []mock.Reply{
		{Reasoning: "read it", ToolCalls: []mock.ToolCall{{Name: "read", Arguments: json.RawMessage(`{"path":"a.txt"}`)}}},
		{Match: "contents of a", Text: "done"},
	}})
	defer stop()
	c := &Client{BaseURL: url, APIKey: "k", ThinkingBudget: 99}
	req := simpleRequest()
	req.Effort = "low" // the request's effort wins over the client's budget
	req.Tools = []llm.ToolSpec{{Name: "read", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	step := func() *llm.Assembler {
		var a llm.Assembler
		for ch := range c.Stream(context.Background(), req) {
			a.Push(ch)
		}
		return &a
	}
	a1 := step()
	if f := a1.Finish(); f.Kind != llm.FinishToolCalls {
		t.Fatalf("step 1 finish %+v", f)
	}
	blocks := a1.Blocks()
	call := blocks[len(blocks)-1]
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, Content: blocks},
		llm.Message{Role: llm.RoleTool, Content: []llm.Block{{Type: llm.BlockToolResult, CallID: call.ID, Content: "contents of a"}}},
		llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "and?"}}})
	a2 := step()
	if a2.Finish().Kind != llm.FinishStop || a2.Text() != "done" {
		t.Fatalf("step 2 %+v %q", a2.Finish(), a2.Text())
	}
	rec, _ := srv.Request(1)
	if rec.Model != "gemini-2.5-flash" {
		t.Errorf("mock read model %q from the path", rec.Model)
	}
	var body struct {
		Contents []struct {
			Role  string            `json:"role"`
			Parts []json.RawMessage `json:"parts"`
		} `json:"contents"`
		GenerationConfig struct {
			ThinkingConfig struct {
				ThinkingBudget int `json:"thinkingBudget"`
			} `json:"thinkingConfig"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(rec.Body, &body); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, c := range body.Contents {
		roles = append(roles, c.Role)
	}
	if strings.Join(roles, ",") != "user,model,user" {
		t.Fatalf("roles %v: want alternating turns, the tool result and the next user text as one user turn", roles)
	}
	if got := string(body.Contents[2].Parts[0]); !strings.Contains(got, `"functionResponse":{"name":"read","response":{"output":"contents of a"}}`) {
		t.Errorf("tool result part %s", got)
	}
	if got := string(body.Contents[1].Parts[0]); !strings.Contains(got, `"functionCall":{"name":"read","args":{"path":"a.txt"}}`) {
		t.Errorf("call part %s", got)
	}
	if want := llm.EffortLow.ThinkingBudget(); body.GenerationConfig.ThinkingConfig.ThinkingBudget != want {
		t.Errorf("thinking budget %d, want %d for low", body.GenerationConfig.ThinkingConfig.ThinkingBudget, want)
	}
}
