package responses

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/packages/ssestream"
	oresponses "github.com/openai/openai-go/v3/responses"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/mock"
)

// TestReasoningCarriedAcrossTurns runs a two-step tool loop against the
// mock: the first step's reasoning comes back with its encrypted content
// and the second request hands it to the model again, stateless (store
// false, no previous_response_id), with the call and its output as items.
func TestReasoningCarriedAcrossTurns(t *testing.T) {
	url, srv, stop := mock.StartTest(&mock.Script{Replies: []mock.Reply{
		{Reasoning: "I should read it.", ToolCalls: []mock.ToolCall{{Name: "read", Arguments: json.RawMessage(`{"path":"a.txt"}`)}}},
		{Match: "contents of a", Text: "done"},
	}})
	defer stop()
	c := &Client{BaseURL: url + "/v1", APIKey: "k", Effort: "low"}
	req := simpleRequest()
	req.Effort = "high" // the request's effort wins over the client's
	req.Tools = []llm.ToolSpec{{Name: "read", Description: "read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	step := func() *llm.Assembler {
		var a llm.Assembler
		for ch := range c.Stream(context.Background(), req) {
			a.Push(ch)
		}
		return &a
	}
	a1 := step()
	if f := a1.Finish(); f.Kind != llm.FinishToolCalls {
		t.Fatalf("step 1 finish %+v, want tool-calls", f)
	}
	blocks := a1.Blocks()
	if len(blocks) != 2 || blocks[0].Signature != "mock-encrypted-1" {
		t.Fatalf("step 1 blocks %+v: want reasoning with the encrypted content, then the call", blocks)
	}
	call := blocks[1]
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, Content: blocks},
		llm.Message{Role: llm.RoleTool, Content: []llm.Block{{Type: llm.BlockToolResult, CallID: call.ID, Content: "contents of a"}}})
	a2 := step()
	if f := a2.Finish(); f.Kind != llm.FinishStop || a2.Text() != "done" {
		t.Fatalf("step 2 finish %+v text %q, want stop \"done\"", f, a2.Text())
	}

	rec, _ := srv.Request(1)
	var body struct {
		Store              *bool            `json:"store"`
		Include            []string         `json:"include"`
		PreviousResponseID string           `json:"previous_response_id"`
		Reasoning          map[string]any   `json:"reasoning"`
		Input              []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(rec.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Store == nil || *body.Store || body.PreviousResponseID != "" || len(body.Include) != 1 || body.Include[0] != "reasoning.encrypted_content" {
		t.Errorf("request 2 is not stateless with encrypted reasoning: %s", rec.Body)
	}
	if body.Reasoning["effort"] != "high" {
		t.Errorf("reasoning %v, want effort high", body.Reasoning)
	}
	var types []string
	for _, it := range body.Input {
		types = append(types, it["type"].(string))
	}
	if got := strings.Join(types, ","); got != "message,reasoning,function_call,function_call_output" {
		t.Fatalf("input item types %s", got)
	}
	if body.Input[1]["encrypted_content"] != "mock-encrypted-1" || body.Input[2]["call_id"] != call.ID || body.Input[3]["call_id"] != call.ID {
		t.Errorf("input items %v", body.Input)
	}
}

// TestMockDecodesWithOpenAISDK reads the mock's Responses stream with the
// official SDK's decoder: an independent check that `reins mock-llm`
// speaks the wire Codex and OpenAI's clients expect.
func TestMockDecodesWithOpenAISDK(t *testing.T) {
	url, _, stop := mock.StartTest(&mock.Script{Replies: []mock.Reply{{
		Reasoning: "think", Text: "hello world", Chunk: 4,
		ToolCalls: []mock.ToolCall{{ID: "call_9", Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)}},
		Usage:     &mock.Usage{Input: 50, Output: 9, CacheRead: 20, Reasoning: 3},
	}}})
	defer stop()
	// The SDK's stream decoder and event types only (its client package
	// is large to build and would add nothing: the request is ours).
	resp, err := http.Post(url+"/v1/responses", "application/json", strings.NewReader(`{"model":"gpt-test","input":"hi","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	stream := ssestream.NewStream[oresponses.ResponseStreamEventUnion](ssestream.NewDecoder(resp), nil)
	defer stream.Close()
	var text strings.Builder
	var done *oresponses.Response
	var items []oresponses.ResponseOutputItemUnion
	for stream.Next() {
		e := stream.Current()
		switch e.Type {
		case "response.output_text.delta":
			text.WriteString(e.Delta)
		case "response.output_item.done":
			items = append(items, e.Item)
		case "response.completed":
			r := e.Response
			done = &r
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if text.String() != "hello world" || done == nil {
		t.Fatalf("text %q completed %v", text.String(), done != nil)
	}
	u := done.Usage
	if u.InputTokens != 50 || u.OutputTokens != 9 || u.InputTokensDetails.CachedTokens != 20 || u.OutputTokensDetails.ReasoningTokens != 3 {
		t.Errorf("usage %+v", u)
	}
	if len(items) != 3 || items[0].Type != "reasoning" || items[0].EncryptedContent == "" ||
		items[1].Type != "message" || items[1].Content[0].Text != "hello world" ||
		items[2].Type != "function_call" || items[2].CallID != "call_9" || items[2].Arguments.OfString != `{"command":"ls"}` {
		t.Errorf("output items %+v", items)
	}
}
