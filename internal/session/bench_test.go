package session

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

func benchLog(b *testing.B) *Log {
	b.Helper()
	l, err := Create(b.TempDir(), Header{ID: "bench"}, Options{Now: func() time.Time { return time.Unix(1, 0) }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	return l
}

// BenchmarkAppend measures the session-log append of the most frequent
// event, a streamed text chunk: buffered (flushed by the loop at step and
// turn ends, docs/events.md) and flushed after every event (the worst case).
func BenchmarkAppend(b *testing.B) {
	chunk := AssistantChunk{Turn: 0, Step: 3, Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Index: 1, Delta: "a streamed word "}}
	for _, flush := range []bool{false, true} {
		name := "buffered"
		if flush {
			name = "flush-each"
		}
		b.Run(name, func(b *testing.B) {
			l := benchLog(b)
			b.ReportAllocs()
			start := time.Now()
			n := 0
			for b.Loop() {
				if _, err := l.Append(TypeAssistantChunk, chunk); err != nil {
					b.Fatal(err)
				}
				if flush {
					if err := l.Flush(); err != nil {
						b.Fatal(err)
					}
				}
				n++
			}
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "events/s")
		})
	}
}

// sessionEvents is a one-turn session of steps tool steps, as the loop
// writes it: each step streams three chunks, answers with a read call and
// gets its result; the last step answers with text.
func sessionEvents(tb testing.TB, steps int) []Event {
	tb.Helper()
	var evs []Event
	add := func(typ string, data any) {
		raw, err := json.Marshal(data)
		if err != nil {
			tb.Fatal(err)
		}
		evs = append(evs, Event{Type: typ, Seq: int64(len(evs)), Time: time.Unix(1, 0), Data: raw})
	}
	add(TypeTurnStart, TurnStart{})
	add(TypeUserMessage, UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "do the task"}}}})
	for s := range steps {
		add(TypeStepStart, StepStart{Step: s})
		for _, d := range []string{"Looking at ", "the next ", "file."} {
			add(TypeAssistantChunk, AssistantChunk{Step: s, Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Delta: d}})
		}
		id := fmt.Sprintf("call_%d", s)
		args := fmt.Sprintf(`{"path":"src/file%d.go"}`, s)
		add(TypeAssistantMessage, AssistantMessage{Step: s, Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
			{Type: llm.BlockText, Text: "Looking at the next file."},
			{Type: llm.BlockToolCall, ID: id, Name: "read", Arguments: args},
		}}, Usage: &llm.Usage{InputTokens: 1000 + s, OutputTokens: 20}})
		add(TypeToolCall, ToolCall{Step: s, CallID: id, Name: "read", Arguments: args})
		add(TypeToolResult, ToolResult{Step: s, CallID: id, Content: fmt.Sprintf("package main\n\n// file %d\nfunc f%d() {}\n", s, s)})
		add(TypeStepEnd, StepEnd{Step: s})
	}
	add(TypeTurnEnd, TurnEnd{Reason: ReasonCompleted})
	return evs
}

// BenchmarkHistory derives the model history of a 1,000-step session
// (what --resume does before its first request).
func BenchmarkHistory(b *testing.B) {
	evs := sessionEvents(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		h, err := History(evs)
		if err != nil || len(h) != 2001 {
			b.Fatalf("%d messages, %v", len(h), err)
		}
	}
	b.ReportMetric(float64(len(evs)), "events/op")
}

// BenchmarkLoad reads the same session back from disk (Load: parse and
// check every line) before History can run.
func BenchmarkLoad(b *testing.B) {
	l := benchLog(b)
	for _, e := range sessionEvents(b, 1000) {
		if _, err := l.Append(e.Type, json.RawMessage(e.Data)); err != nil {
			b.Fatal(err)
		}
	}
	l.Close()
	path := filepath.Join(l.Dir(), FileName)
	b.ReportAllocs()
	for b.Loop() {
		ld, err := Load(path)
		if err != nil || len(ld.Events) != 8003 {
			b.Fatalf("%v", err)
		}
	}
}
