package outcome

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

// foldEvents is a 1,000-step session as the loop logs it: per step a
// reasoning block, a text block and a tool call streamed as chunks, the
// assistant message, the call and its result.
func foldEvents(tb testing.TB) []session.Event {
	tb.Helper()
	var evs []session.Event
	add := func(typ string, data any) {
		raw, err := json.Marshal(data)
		if err != nil {
			tb.Fatal(err)
		}
		e, err := session.NewEvent(typ, int64(len(evs)), time.Unix(1, 0), raw)
		if err != nil {
			tb.Fatal(err)
		}
		evs = append(evs, e)
	}
	chunk := func(s int, c llm.Chunk) { add(session.TypeAssistantChunk, session.AssistantChunk{Step: s, Chunk: c}) }
	add(session.TypeTurnStart, session.TurnStart{})
	for s := range 1000 {
		add(session.TypeStepStart, session.StepStart{Step: s})
		chunk(s, llm.Chunk{Type: llm.ChunkBlockStart, Index: 0, Block: &llm.Block{Type: llm.BlockReasoning}})
		for range 4 {
			chunk(s, llm.Chunk{Type: llm.ChunkReasoningDelta, Index: 0, Delta: "thinking about it "})
		}
		chunk(s, llm.Chunk{Type: llm.ChunkBlockEnd, Index: 0})
		chunk(s, llm.Chunk{Type: llm.ChunkBlockStart, Index: 1, Block: &llm.Block{Type: llm.BlockText}})
		for range 4 {
			chunk(s, llm.Chunk{Type: llm.ChunkTextDelta, Index: 1, Delta: "some answer text "})
		}
		chunk(s, llm.Chunk{Type: llm.ChunkBlockEnd, Index: 1})
		id := fmt.Sprintf("call_%d", s)
		chunk(s, llm.Chunk{Type: llm.ChunkBlockStart, Index: 2, Block: &llm.Block{Type: llm.BlockToolCall, ID: id, Name: "read"}})
		chunk(s, llm.Chunk{Type: llm.ChunkToolCallDelta, Index: 2, Delta: `{"path":"a.go"}`})
		chunk(s, llm.Chunk{Type: llm.ChunkBlockEnd, Index: 2})
		chunk(s, llm.Chunk{Type: llm.ChunkFinish, Finish: &llm.Finish{Kind: llm.FinishToolCalls}})
		add(session.TypeAssistantMessage, session.AssistantMessage{Step: s, Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
			{Type: llm.BlockReasoning, Text: "thinking about it thinking about it thinking about it thinking about it "},
			{Type: llm.BlockText, Text: "some answer text some answer text some answer text some answer text "},
			{Type: llm.BlockToolCall, ID: id, Name: "read", Arguments: `{"path":"a.go"}`},
		}}})
		add(session.TypeToolCall, session.ToolCall{Step: s, CallID: id, Name: "read", Arguments: `{"path":"a.go"}`})
		add(session.TypeToolResult, session.ToolResult{Step: s, CallID: id, Content: "package a\n"})
		add(session.TypeStepEnd, session.StepEnd{Step: s})
	}
	add(session.TypeTurnEnd, session.TurnEnd{Reason: session.ReasonCompleted})
	return evs
}

// BenchmarkFold folds a 1,000-step session's events (what every observer
// of a run — reins run, the subagent manager, the SDK — does live).
func BenchmarkFold(b *testing.B) {
	evs := foldEvents(b)
	b.ReportAllocs()
	start := time.Now()
	n := 0
	for b.Loop() {
		var f Fold
		for _, e := range evs {
			f.Push(e)
		}
		if out := f.Collect(); len(out) != 3 {
			b.Fatalf("output = %+v", out)
		}
		n += len(evs)
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "events/s")
}
