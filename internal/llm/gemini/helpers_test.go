package gemini

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/llmtest"
	"github.com/reinsdev/reins/internal/llm/mock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func simpleRequest() *llm.Request {
	return &llm.Request{Model: "gemini-2.5-flash", System: "be brief", MaxTokens: 100, Messages: []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "hello"}}},
	}}
}

// fixedMessage reports whether msg is one of the texts this adapter (and
// the shared attempt) puts in an error finish: never provider bytes.
func fixedMessage(msg string) bool {
	for _, m := range []string{msgEmpty, msgClosed, msgMalformed, msgCW, msgError, msgUnknown,
		"provider returned an empty body", "stream event exceeds the size limit"} {
		if msg == m || strings.HasPrefix(msg, msgError+": ") {
			return true
		}
	}
	return false
}

// wire is this package's client for llmtest's shared helpers.
func wire(ctx context.Context, rt http.RoundTripper) iter.Seq[llm.Chunk] {
	c := &Client{BaseURL: "http://mock.invalid", APIKey: "k", HTTP: &http.Client{Transport: rt}}
	return c.Stream(ctx, simpleRequest())
}

// mockCaptures returns the exact bytes `reins mock-llm` sends on the
// Gemini wire for replies covering every shape and fault it renders.
func mockCaptures(tb testing.TB) [][]byte {
	tb.Helper()
	args := func(s string) json.RawMessage { return json.RawMessage(s) }
	replies := []mock.Reply{
		{Text: "Hello there, how can I help?", Chunk: 5},
		{Reasoning: "Let me think about it.", Text: "It is 4.", Chunk: 4},
		{Reasoning: "only thinking"},
		{ToolCalls: []mock.ToolCall{{Name: "read", Arguments: args(`{"path":"notes.txt"}`)}, {ID: "c2", Name: "bash", Arguments: args(`{"command":"ls"}`)}}, Chunk: 3},
		{Text: "alive", Chunk: 1, KeepAlive: true},
		{Text: "cut sho", Finish: "length"},
		{Text: "no", Finish: "content_filter"},
		{Text: "odd", Finish: "MALFORMED_FUNCTION_CALL"},
		{Text: "usage", Usage: &mock.Usage{Input: 100, Output: 20, CacheRead: 64, Reasoning: 7}},
		{Fault: mock.FaultEmpty},
		{Fault: mock.FaultCut, Text: "partial answer", Chunk: 4},
		{Fault: mock.FaultMalformed, Text: "before the bad payload"},
		{Fault: mock.FaultOverloaded, Text: "then overloaded"},
	}
	return llmtest.MockCaptures(wire, replies)
}
