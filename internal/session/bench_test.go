package session

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

func benchLog(b *testing.B) *Log { return benchLogOpts(b, Options{}) }

func benchLogOpts(b *testing.B, opts Options) *Log {
	b.Helper()
	opts.Now = func() time.Time { return time.Unix(1, 0) }
	l, err := Create(b.TempDir(), Header{ID: "bench"}, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	return l
}

// BenchmarkAppend measures the session-log append of the most frequent
// event, a streamed text chunk: buffered and group-committed (what the loop
// does while a model streams), written through (reins sdk), flushed after
// every event, and synced after every event (the fsync worst case, which
// no reins path takes).
func BenchmarkAppend(b *testing.B) {
	chunk := AssistantChunk{Turn: 0, Step: 3, Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Index: 1, Delta: "a streamed word "}}
	for _, mode := range []string{"buffered", "write-through", "flush-each", "sync-each"} {
		b.Run(mode, func(b *testing.B) {
			l := benchLogOpts(b, Options{WriteThrough: mode == "write-through"})
			b.ReportAllocs()
			start := time.Now()
			n := 0
			for b.Loop() {
				if _, err := l.Append(TypeAssistantChunk, chunk); err != nil {
					b.Fatal(err)
				}
				var err error
				switch mode {
				case "flush-each":
					err = l.Flush()
				case "sync-each":
					err = l.Sync()
				}
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "events/s")
		})
	}
}

// BenchmarkTurnLog is the log work of the two-step turn (a read call, then
// the answer: 17 events, 6 of them streamed chunks) under each durability
// policy, so the policies' cost is seen per turn:
//
//   - v1: the policy of 14986a5 — buffered, written at step ends and the
//     turn end, never synced;
//   - write-ahead: issue 13's — flushed before each of the two requests,
//     synced before the tool runs and after turn/end;
//   - write-ahead-nosync: the same flushes with the two fsyncs replaced by
//     flushes, which isolates what fsync costs.
//
// Each iteration is one turn on a fresh log, so the file grows as a real
// session's does; the log is created outside the timer.
func BenchmarkTurnLog(b *testing.B) {
	// The read step, then the answer step, then turn/end: 0 turn/start,
	// 1 user/message, 2 step/start, 3-5 chunks, 6 assistant/message,
	// 7 tool/call, 8 tool/result, 9 step/end, 10 step/start, 11-13 chunks,
	// 14 assistant/message, 15 step/end, 16 turn/end.
	first := sessionEvents(b, 1)
	evs := append([]Event(nil), first[:len(first)-1]...)
	second := sessionEvents(b, 2)
	for _, e := range second[10 : len(second)-1] { // step 1: step/start … step/end
		if e.Type == TypeToolCall || e.Type == TypeToolResult {
			continue
		}
		evs = append(evs, e)
	}
	evs = append(evs, first[len(first)-1])
	if len(evs) != 17 {
		b.Fatalf("%d events", len(evs))
	}
	// Where each policy flushes or syncs: after the event at that index.
	type point struct {
		after int
		sync  bool
	}
	points := map[string][]point{
		"v1":                 {{9, false}, {15, false}, {16, false}},
		"write-ahead":        {{2, false}, {7, true}, {9, false}, {10, false}, {15, false}, {16, true}},
		"write-ahead-nosync": {{2, false}, {7, false}, {9, false}, {10, false}, {15, false}, {16, false}},
	}
	for _, name := range []string{"v1", "write-ahead", "write-ahead-nosync"} {
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				b.StopTimer()
				l, err := Create(dir, Header{ID: fmt.Sprintf("t%d", i)}, Options{})
				if err != nil {
					b.Fatal(err)
				}
				i++
				b.StartTimer()
				pts := points[name]
				for k, e := range evs {
					if _, err := l.Append(e.Type, json.RawMessage(e.Data)); err != nil {
						b.Fatal(err)
					}
					if len(pts) > 0 && pts[0].after == k {
						if pts[0].sync {
							err = l.Sync()
						} else {
							err = l.Flush()
						}
						if err != nil {
							b.Fatal(err)
						}
						pts = pts[1:]
					}
				}
				b.StopTimer()
				l.Close()
				b.StartTimer()
			}
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
		e, err := NewEvent(typ, int64(len(evs)), time.Unix(1, 0), raw)
		if err != nil {
			tb.Fatal(err)
		}
		evs = append(evs, e)
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
