package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

// fuzzLogs are the valid logs FuzzRead damages: logs written by this
// package's own writer for a realistic run (one closed turn with a tool
// call and a retry, then a turn left open by a crash), and the golden logs
// captured from real harness runs, with their placeholders filled in. The
// writer's logs come first so a seed's log number keeps its meaning.
func fuzzLogs(tb testing.TB) [][]byte {
	tb.Helper()
	logs := [][]byte{writtenLog(tb, false), writtenLog(tb, true)}
	golden, _ := filepath.Glob(filepath.Join("..", "harness", "testdata", "*.jsonl"))
	for _, p := range golden {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		b = bytes.ReplaceAll(b, []byte(`"TIME"`), []byte(`"2026-01-02T03:04:05.006Z"`))
		logs = append(logs, b)
	}
	return logs
}

// writtenLog writes a log through Create and Append the way the agent loop
// does and returns its bytes; open leaves the last turn unclosed.
func writtenLog(tb testing.TB, open bool) []byte {
	tb.Helper()
	dir := tb.TempDir()
	l, err := Create(dir, Header{ID: "fuzz", Cwd: "/w", CreatedAt: time.Unix(0, 0).UTC()}, Options{Now: fixedClock()})
	if err != nil {
		tb.Fatal(err)
	}
	user := func(s string) UserMessage {
		return UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: s}}}}
	}
	chunk := func(turn, step int, c llm.Chunk) AssistantChunk {
		return AssistantChunk{Turn: turn, Step: step, Chunk: c}
	}
	call := llm.Block{Type: llm.BlockToolCall, ID: "call_1", Name: "read", Arguments: `{"path":"notes.txt"}`}
	evs := []struct {
		typ  string
		data any
	}{
		{TypeTurnStart, TurnStart{Turn: 0}},
		{TypeUserMessage, user("what does notes.txt say?")},
		{TypeStepStart, StepStart{Turn: 0, Step: 0}},
		{TypeAssistantChunk, chunk(0, 0, llm.ErrorFinish(llm.CodeEmptyResponse, "model returned no content"))},
		{TypeLLMRetry, LLMRetry{RetryID: "0.0.1", Provider: "openai", Retry: 1, MaxRetries: 5, DelayMs: 1000, Failure: Failure{Code: llm.CodeEmptyResponse, Message: "model returned no content"}}},
		{TypeLLMRetryStarted, LLMRetryStarted{RetryID: "0.0.1", Retry: 1}},
		{TypeAssistantChunk, chunk(0, 0, llm.Chunk{Type: llm.ChunkBlockStart, Block: &llm.Block{Type: llm.BlockToolCall, ID: "call_1", Name: "read"}})},
		{TypeAssistantChunk, chunk(0, 0, llm.Chunk{Type: llm.ChunkToolCallDelta, Delta: `{"path":"notes.txt"}`})},
		{TypeAssistantChunk, chunk(0, 0, llm.Chunk{Type: llm.ChunkBlockEnd})},
		{TypeAssistantChunk, chunk(0, 0, llm.Chunk{Type: llm.ChunkFinish, Finish: &llm.Finish{Kind: llm.FinishToolCalls}})},
		{TypeAssistantMessage, AssistantMessage{Turn: 0, Step: 0, Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{call}}, Usage: &llm.Usage{InputTokens: 12, OutputTokens: 5}}},
		{TypeToolCall, ToolCall{Turn: 0, Step: 0, CallID: "call_1", Name: "read", Arguments: call.Arguments}},
		{TypeToolResult, ToolResult{Turn: 0, Step: 0, CallID: "call_1", Content: "     1\tremember the milk\n"}},
		{TypeStepEnd, StepEnd{Turn: 0, Step: 0}},
		{TypeStepStart, StepStart{Turn: 0, Step: 1}},
		{TypeAssistantChunk, chunk(0, 1, llm.Chunk{Type: llm.ChunkTextDelta, Delta: "The note says: remember the milk. ✓"})},
		{TypeAssistantMessage, AssistantMessage{Turn: 0, Step: 1, Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: "The note says: remember the milk. ✓"}}}}},
		{TypeStepEnd, StepEnd{Turn: 0, Step: 1}},
		{TypeTurnEnd, TurnEnd{Turn: 0, Reason: ReasonCompleted, Usage: &llm.Usage{InputTokens: 30, OutputTokens: 9}}},
		{TypeTurnStart, TurnStart{Turn: 1}},
		{TypeUserMessage, user("and now?\nwith \"quotes\" and a\ttab")},
		{TypeStepStart, StepStart{Turn: 1, Step: 0}},
		{TypeSubagentStart, SubagentStart{RunID: "run-1", ChildSession: "child", Agent: "general", Provider: "inprocess", Label: "look"}},
		{TypeSubagentEnd, SubagentEnd{RunID: "run-1", StopReason: "completed"}},
		{TypeJobNotice, JobNotice{JobID: "job-1", Status: "completed"}},
	}
	for _, e := range evs {
		if _, err := l.Append(e.typ, e.data); err != nil {
			tb.Fatal(err)
		}
	}
	if !open {
		if _, err := l.Append(TypeTurnEnd, TurnEnd{Turn: 1, Reason: ReasonAborted, By: AbortedByUser}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(l.Path())
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// lines splits b after each newline, keeping the newlines; an empty b is
// one empty line, as the loader counts it.
func lines(b []byte) [][]byte {
	ls := bytes.SplitAfter(b, []byte("\n"))
	if len(ls) > 1 && len(ls[len(ls)-1]) == 0 {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// FuzzRead feeds the loader a valid log cut after `cut` of its lines
// (cut 0: no valid part, the input is the tail alone) followed by an
// arbitrary tail. For any input: no panic, the only error is a
// *CorruptError, and a successful load is consistent and converges (Reopen
// writes the repair, and the repaired file loads clean with the same
// events). For a valid part: every complete event in it survives, and any
// corruption reported lies in the tail.
func FuzzRead(f *testing.F) {
	logs := fuzzLogs(f)
	for i, l := range logs {
		n := uint16(len(lines(l)))
		f.Add(uint8(i), n, []byte{})                                          // the whole log
		f.Add(uint8(i), n-1, lines(l)[n-1][:len(lines(l)[n-1])/2])            // last line cut mid-write
		f.Add(uint8(i), n-1, bytes.TrimSuffix(lines(l)[n-1], []byte("\n")))   // last line lost its newline
		f.Add(uint8(i), n/2, []byte("{\"type\":\"turn/end\",\"seq\":999}\n")) // a seq gap
		f.Add(uint8(i), uint16(0), l)                                         // the log as arbitrary bytes
	}
	f.Add(uint8(0), uint16(1), []byte("\n"))
	f.Add(uint8(0), uint16(0), []byte(`{"type":"session","version":1,"id":"x","createdAt":"2026-01-02T03:04:05Z","cwd":"/w","delegationDepth":0}`))
	f.Add(uint8(0), uint16(3), []byte("\x00\xff\r\n"))

	// One scratch file for checkReopen, rewritten by every input: targets
	// run their inputs one at a time, and a directory per input would
	// dominate the cost of an execution.
	scratch := filepath.Join(f.TempDir(), FileName)

	f.Fuzz(func(t *testing.T, which uint8, cut uint16, tail []byte) {
		log := logs[int(which)%len(logs)]
		ls := lines(log)
		k := int(cut) % (len(ls) + 1)
		valid := bytes.Join(ls[:k], nil)
		input := append(append([]byte(nil), valid...), tail...)

		ld, err := Read(bytes.NewReader(input))
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T) is not a *CorruptError", err, err)
			}
			if ce.Line < 1 || ce.Line > len(lines(input)) {
				t.Fatalf("corrupt line %d outside the input's %d lines", ce.Line, len(lines(input)))
			}
			if k > 0 && ce.Line <= k {
				t.Fatalf("valid part of %d lines reported corrupt at line %d (%s)", k, ce.Line, ce.Reason)
			}
			return
		}
		checkLoaded(t, input, ld)

		if k > 1 {
			// Every complete event of the valid part is there, unchanged.
			ref, err := Read(bytes.NewReader(valid))
			if err != nil {
				t.Fatalf("valid part does not load: %v", err)
			}
			want := ref.Events
			if ref.Repair.ClosedTurn {
				want = want[:len(want)-1]
			}
			if len(ld.Events) < len(want) {
				t.Fatalf("%d events loaded, the valid part alone has %d", len(ld.Events), len(want))
			}
			for i, e := range want {
				if !sameEvent(e, ld.Events[i]) {
					t.Fatalf("event %d changed:\n was %s %d %s\n got %s %d %s", i, e.Type, e.Seq, e.Data, ld.Events[i].Type, ld.Events[i].Seq, ld.Events[i].Data)
				}
			}
		}

		checkReopen(t, scratch, input, ld)
	})
}

// checkLoaded checks what a successful Read returned against its input.
func checkLoaded(t *testing.T, input []byte, ld *Loaded) {
	t.Helper()
	r := ld.Repair
	if r.ValidSize < 0 || r.DroppedBytes < 0 || r.ValidSize+r.DroppedBytes != int64(len(input)) {
		t.Fatalf("repair %+v does not account for the %d input bytes", r, len(input))
	}
	if ld.Header.Type != headerType {
		t.Fatalf("header type %q", ld.Header.Type)
	}
	open := false
	for i, e := range ld.Events {
		if e.Seq != int64(i) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		if e.Type == "" {
			t.Fatalf("event %d has no type", i)
		}
		switch e.Type {
		case TypeTurnStart:
			open = true
		case TypeTurnEnd:
			open = false
		}
	}
	if open {
		t.Fatal("the last turn is still open after load")
	}
	if r.ClosedTurn {
		last := ld.Events[len(ld.Events)-1]
		var te TurnEnd
		if last.Type != TypeTurnEnd || last.Decode(&te) != nil || te.Reason != ReasonInterrupted {
			t.Fatalf("closed turn but the last event is %s %s", last.Type, last.Data)
		}
	}
}

// checkReopen writes input to a file, lets Reopen repair it and appends a
// turn, as `reins run --resume` does, then loads the result: it must load
// clean (nothing left to repair) with the same events, then the new turn.
func checkReopen(t *testing.T, path string, input []byte, ld *Loaded) {
	t.Helper()
	if err := os.WriteFile(path, input, 0o644); err != nil {
		t.Fatal(err)
	}
	l, ld2, err := Reopen(path, Options{})
	if err != nil {
		t.Fatalf("Reopen of a log Read accepts: %v", err)
	}
	next := l.NextTurn()
	for _, e := range []struct {
		typ  string
		data any
	}{{TypeTurnStart, TurnStart{Turn: next}}, {TypeTurnEnd, TurnEnd{Turn: next, Reason: ReasonCompleted}}} {
		if _, err := l.Append(e.typ, e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if len(ld2.Events) != len(ld.Events) {
		t.Fatalf("Reopen loaded %d events, Read %d", len(ld2.Events), len(ld.Events))
	}
	after, err := Load(path)
	if err != nil {
		t.Fatalf("log repaired by Reopen does not load: %v", err)
	}
	if after.Repair.Repaired() {
		t.Fatalf("log repaired by Reopen still needs repair: %+v", after.Repair)
	}
	if len(after.Events) != len(ld.Events)+2 {
		t.Fatalf("repaired and resumed log has %d events, want %d + 2", len(after.Events), len(ld.Events))
	}
	if got := after.Events[len(ld.Events)]; got.Type != TypeTurnStart {
		t.Fatalf("resumed turn starts with %s", got.Type)
	}
	for i := range ld.Events {
		if !sameEvent(ld.Events[i], after.Events[i]) {
			t.Fatalf("event %d changed by the repair:\n was %s %d %s\n got %s %d %s", i,
				ld.Events[i].Type, ld.Events[i].Seq, ld.Events[i].Data, after.Events[i].Type, after.Events[i].Seq, after.Events[i].Data)
		}
	}
}

// sameEvent compares events as JSON values: a rewritten event's data may
// be compacted and its time re-formatted.
func sameEvent(a, b Event) bool {
	return a.Type == b.Type && a.Seq == b.Seq && a.Time.Equal(b.Time) && sameJSON(a.Data, b.Data)
}

func sameJSON(a, b json.RawMessage) bool {
	norm := func(r json.RawMessage) string {
		if len(bytes.TrimSpace(r)) == 0 {
			return "null"
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, r); err != nil {
			return string(r)
		}
		return buf.String()
	}
	return norm(a) == norm(b)
}
