package responses

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/enccache"
)

// benchRequest is the two-step task's second request in shape: a system
// prompt, a prompt, a call and its result, and eighteen tools whose
// schemas, with whitespace, make about 14 KB.
func benchRequest() *llm.Request {
	var tools []llm.ToolSpec
	for i := range 18 {
		props := map[string]any{}
		for j := range 6 {
			props[fmt.Sprintf("p%d", j)] = map[string]any{"type": "string", "description": strings.Repeat("what this parameter means ", 4)}
		}
		schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": []string{"p0"}})
		tools = append(tools, llm.ToolSpec{Name: fmt.Sprintf("tool_%d", i), Description: strings.Repeat("What the tool does. ", 8), Parameters: schema})
	}
	args := `{"path":"notes.txt"}`
	return &llm.Request{
		Model: "mock-model", System: strings.Repeat("You are reins. ", 60), MaxTokens: 8192, Tools: tools,
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "read notes"}}},
			{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolCall, ID: "c1", Name: "read", Arguments: args}}},
			{Role: llm.RoleTool, Content: []llm.Block{{Type: llm.BlockToolResult, CallID: "c1", Content: "1\thello"}}},
		},
	}
}

func BenchmarkEncodeRequest(b *testing.B) {
	req := benchRequest()
	var cache enccache.Tools
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeRequest(req, "", &cache); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEncodeToolsCached: a body whose tools came from the cache is the
// body encoded afresh, a valid object with every tool, and a changed
// schema is sent changed.
func TestEncodeToolsCached(t *testing.T) {
	req := benchRequest()
	var cache enccache.Tools
	fresh, err := encodeRequest(req, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		got, err := encodeRequest(req, "", &cache)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(fresh) {
			t.Fatalf("encoding %d with the cache differs from a fresh one:\n%s\n%s", i, got, fresh)
		}
	}
	var body struct {
		Model string
		Tools []struct {
			Name       string
			Parameters json.RawMessage
		}
	}
	if err := json.Unmarshal(fresh, &body); err != nil || body.Model != "mock-model" || len(body.Tools) != 18 {
		t.Fatalf("body: %v, model %q, %d tools", err, body.Model, len(body.Tools))
	}
	req.Tools[3].Parameters = []byte(`{"type":"object","properties":{"changed":{"type":"string"}}}`)
	got, err := encodeRequest(req, "", &cache)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"changed"`) {
		t.Error("a changed schema was not sent")
	}
}
