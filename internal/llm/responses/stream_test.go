package responses

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/llmtest"
)

// The transcripts below are a second, independent fake: written from
// OpenAI's public Responses streaming reference (the event names and
// shapes of its examples), not from reins's mock server, so a mistake
// shared by the adapter and the mock cannot hide here.

func ev(typ, body string) string {
	return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\"," + body + "}\n\n"
}

var (
	docCreated  = ev("response.created", `"sequence_number":0,"response":{"id":"resp_67c9fdcecf488190bdd9a0409de3a1ec07b8b0ad4e5eb654","object":"response","created_at":1741290958,"status":"in_progress","error":null,"incomplete_details":null,"instructions":"You are a helpful assistant.","max_output_tokens":null,"model":"gpt-4.1-2025-04-14","output":[],"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"store":true,"temperature":1.0,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":1.0,"truncation":"disabled","usage":null,"user":null,"metadata":{}}`)
	docProgress = ev("response.in_progress", `"sequence_number":1,"response":{"id":"resp_67c9","object":"response","status":"in_progress","output":[]}`)
	docText     = docCreated + docProgress +
		ev("response.output_item.added", `"output_index":0,"item":{"id":"msg_67c9fdcf37fc8190ba82116e33fb28c507b8b0ad4e5eb654","type":"message","status":"in_progress","role":"assistant","content":[]}`) +
		ev("response.content_part.added", `"item_id":"msg_67c9","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`) +
		ev("response.output_text.delta", `"item_id":"msg_67c9","output_index":0,"content_index":0,"delta":"Hi"`) +
		ev("response.output_text.delta", `"item_id":"msg_67c9","output_index":0,"content_index":0,"delta":" there!"`) +
		ev("response.output_text.done", `"item_id":"msg_67c9","output_index":0,"content_index":0,"text":"Hi there!"`) +
		ev("response.content_part.done", `"item_id":"msg_67c9","output_index":0,"content_index":0,"part":{"type":"output_text","text":"Hi there!","annotations":[]}`) +
		ev("response.output_item.done", `"output_index":0,"item":{"id":"msg_67c9","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hi there!","annotations":[]}]}`)
	docUsage     = `"usage":{"input_tokens":37,"input_tokens_details":{"cached_tokens":12},"output_tokens":11,"output_tokens_details":{"reasoning_tokens":4},"total_tokens":48}`
	docCompleted = ev("response.completed", `"response":{"id":"resp_67c9","object":"response","status":"completed","output":[],`+docUsage+`}`)

	docReasoningCall = docCreated +
		ev("response.output_item.added", `"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}`) +
		ev("response.reasoning_summary_part.added", `"item_id":"rs_1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}`) +
		ev("response.reasoning_summary_text.delta", `"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"**Checking the weather**"`) +
		ev("response.reasoning_summary_text.done", `"item_id":"rs_1","output_index":0,"summary_index":0,"text":"**Checking the weather**"`) +
		ev("response.output_item.done", `"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"**Checking the weather**"}],"encrypted_content":"gAAAAABo-opaque=="}`) +
		ev("response.output_item.added", `"output_index":1,"item":{"type":"function_call","id":"fc_12345xyz","call_id":"call_12345xyz","name":"get_weather","arguments":""}`) +
		ev("response.function_call_arguments.delta", `"item_id":"fc_12345xyz","output_index":1,"delta":"{\"location\":"`) +
		ev("response.function_call_arguments.delta", `"item_id":"fc_12345xyz","output_index":1,"delta":"\"Paris, France\"}"`) +
		ev("response.function_call_arguments.done", `"item_id":"fc_12345xyz","output_index":1,"arguments":"{\"location\":\"Paris, France\"}"`) +
		ev("response.output_item.done", `"output_index":1,"item":{"type":"function_call","id":"fc_12345xyz","call_id":"call_12345xyz","name":"get_weather","arguments":"{\"location\":\"Paris, France\"}","status":"completed"}`) +
		docCompleted
)

func docServer(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path != "/v1/responses" || r.Header.Get("Authorization") != "Bearer sk-test" {
			http.Error(w, `{"error":{"message":"wrong path or key","type":"invalid_request_error"}}`, http.StatusNotFound)
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
	return srv.URL + "/v1"
}

func run(t *testing.T, url string) ([]llm.Chunk, *llm.Assembler) {
	t.Helper()
	c := &Client{BaseURL: url, APIKey: "sk-test"}
	var chunks []llm.Chunk
	for ch := range c.Stream(context.Background(), simpleRequest()) {
		chunks = append(chunks, ch)
	}
	return chunks, llmtest.Assemble(chunks)
}

func TestDocsFake(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		kind   llm.FinishKind
		code   llm.Code
		text   string
	}{
		{name: "text", body: docText + docCompleted, kind: llm.FinishStop, text: "Hi there!"},
		{name: "reasoning and a function call", body: docReasoningCall, kind: llm.FinishToolCalls},
		{name: "keep-alive comments between events", body: ": keep-alive\n\n" + strings.ReplaceAll(docText, "\n\nevent:", "\n\n: ping\n\nevent:") + docCompleted, kind: llm.FinishStop, text: "Hi there!"},
		{name: "unknown event types are skipped", body: docText + ev("response.future_thing.delta", `"output_index":9,"delta":"x"`) + docCompleted, kind: llm.FinishStop, text: "Hi there!"},
		{name: "only the done item carries the text", body: docCreated +
			ev("response.output_item.done", `"output_index":0,"item":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"whole"}]}`) + docCompleted,
			kind: llm.FinishStop, text: "whole"},
		{name: "refusal is text", body: docCreated +
			ev("response.output_item.added", `"output_index":0,"item":{"type":"message","role":"assistant","content":[]}`) +
			ev("response.refusal.delta", `"output_index":0,"content_index":0,"delta":"I can't help with that."`) + docCompleted,
			kind: llm.FinishStop, text: "I can't help with that."},
		{name: "incomplete: max_output_tokens", body: docText + ev("response.incomplete", `"response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}`), kind: llm.FinishMaxTokens, text: "Hi there!"},
		{name: "incomplete: content_filter", body: docText + ev("response.incomplete", `"response":{"status":"incomplete","incomplete_details":{"reason":"content_filter"}}`), kind: llm.FinishRefusal},
		{name: "incomplete: unknown reason", body: docText + ev("response.incomplete", `"response":{"status":"incomplete","incomplete_details":{"reason":"new-reason"}}`), kind: llm.FinishError, code: "NEW_REASON"},
		{name: "failed: server_error", body: docText + ev("response.failed", `"response":{"status":"failed","error":{"code":"server_error","message":"The model failed"}}`), kind: llm.FinishError, code: llm.CodeServer, text: "Hi there!"},
		{name: "failed: rate_limit_exceeded", body: docCreated + ev("response.failed", `"response":{"status":"failed","error":{"code":"rate_limit_exceeded","message":"slow down"}}`), kind: llm.FinishError, code: llm.CodeRateLimit},
		{name: "failed: context_length_exceeded", body: docCreated + ev("response.failed", `"response":{"status":"failed","error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}}`), kind: llm.FinishError, code: llm.CodeContextWindowExceeded},
		{name: "failed: insufficient_quota", body: docCreated + ev("response.failed", `"response":{"status":"failed","error":{"code":"insufficient_quota","message":"billing"}}`), kind: llm.FinishError, code: llm.CodeQuota},
		{name: "error event", body: docCreated + ev("error", `"code":"ERR_SOMETHING","message":"Something went wrong","param":null,"sequence_number":1`), kind: llm.FinishError, code: llm.CodeServer},
		{name: "completed with no output", body: docCreated + docCompleted, kind: llm.FinishError, code: llm.CodeEmptyResponse},
		{name: "cut before response.completed", body: docText, kind: llm.FinishError, code: llm.CodeStreamClosed, text: "Hi there!"},
		{name: "[DONE] is not a terminal", body: docText + "data: [DONE]\n\n", kind: llm.FinishError, code: llm.CodeStreamClosed},
		{name: "empty body", body: "", kind: llm.FinishError, code: llm.CodeEmptyResponse},
		{name: "not JSON", body: docCreated + "data: {oops\n\n", kind: llm.FinishError, code: llm.CodeMalformedResponse},
		{name: "HTTP 429", status: 429, body: `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, kind: llm.FinishError, code: llm.CodeRateLimit},
		{name: "HTTP 400 context window", status: 400, body: `{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`, kind: llm.FinishError, code: llm.CodeContextWindowExceeded},
		{name: "HTTP 429 insufficient_quota", status: 429, body: `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`, kind: llm.FinishError, code: llm.CodeQuota},
		{name: "HTTP 500", status: 500, body: `{"error":{"message":"boom","type":"server_error"}}`, kind: llm.FinishError, code: llm.CodeServer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status := tc.status
			if status == 0 {
				status = http.StatusOK
			}
			chunks, asm := run(t, docServer(t, status, tc.body))
			if status == http.StatusOK {
				checkFinishOnly(t, chunks)
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

func checkFinishOnly(t *testing.T, chunks []llm.Chunk) {
	t.Helper()
	n := 0
	for _, c := range chunks {
		if c.Type == llm.ChunkFinish {
			n++
		}
	}
	if n != 1 || chunks[len(chunks)-1].Type != llm.ChunkFinish {
		t.Fatalf("%d finishes, want exactly one, last", n)
	}
}

func TestDocsFakeReasoningCallAndUsage(t *testing.T) {
	_, asm := run(t, docServer(t, http.StatusOK, docReasoningCall))
	bs := asm.Blocks()
	if len(bs) != 2 || bs[0].Type != llm.BlockReasoning || bs[1].Type != llm.BlockToolCall {
		t.Fatalf("blocks %+v, want reasoning then tool-call", bs)
	}
	if bs[0].Text != "**Checking the weather**" || bs[0].Signature != "gAAAAABo-opaque==" {
		t.Errorf("reasoning %+v: want the summary and the encrypted content as its signature", bs[0])
	}
	if bs[1].ID != "call_12345xyz" || bs[1].Name != "get_weather" || bs[1].Arguments != `{"location":"Paris, France"}` {
		t.Errorf("tool call %+v", bs[1])
	}
	u := asm.Usage()
	if u.InputTokens != 37 || u.OutputTokens != 11 || u.CacheReadTokens != 12 || u.ReasoningTokens != 4 {
		t.Errorf("usage %+v, want in 37 out 11 cached 12 reasoning 4", u)
	}
}
