package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reinsdev/reins/internal/llm"
)

func fixedClock() func() time.Time {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var n int
	return func() time.Time { n++; return t0.Add(time.Duration(n) * time.Millisecond) }
}

func newTestLog(t *testing.T) *Log {
	t.Helper()
	l, err := Create(t.TempDir(), Header{ID: "s1", Cwd: "/w", CreatedAt: time.Unix(0, 0).UTC()}, Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// writeTurn appends a complete turn with a user message, a tool call and an
// answer.
func writeTurn(t *testing.T, l *Log, turn int) {
	t.Helper()
	must := func(_ Event, err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(l.Append(TypeTurnStart, TurnStart{Turn: turn}))
	must(l.Append(TypeUserMessage, UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "hi"}}}}))
	must(l.Append(TypeStepStart, StepStart{Turn: turn}))
	must(l.Append(TypeAssistantMessage, AssistantMessage{Turn: turn, Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolCall, ID: "c1", Name: "read", Arguments: `{"path":"a"}`}}}}))
	must(l.Append(TypeToolCall, ToolCall{Turn: turn, CallID: "c1", Name: "read", Arguments: `{"path":"a"}`}))
	must(l.Append(TypeToolResult, ToolResult{Turn: turn, CallID: "c1", Content: "A"}))
	must(l.Append(TypeStepEnd, StepEnd{Turn: turn}))
	must(l.Append(TypeAssistantMessage, AssistantMessage{Turn: turn, Step: 1, Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: "done"}}}}))
	must(l.Append(TypeTurnEnd, TurnEnd{Turn: turn, Reason: ReasonCompleted}))
}

func TestRoundTrip(t *testing.T) {
	l := newTestLog(t)
	writeTurn(t, l, 0)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	ld, err := Load(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if ld.Repair.Repaired() {
		t.Errorf("clean log reported repaired: %+v", ld.Repair)
	}
	if ld.Header.ID != "s1" || ld.Header.Version != FormatVersion || ld.Header.Type != "session" {
		t.Errorf("header = %+v", ld.Header)
	}
	if len(ld.Events) != 9 {
		t.Fatalf("got %d events, want 9", len(ld.Events))
	}
	for i, e := range ld.Events {
		if e.Seq != int64(i) {
			t.Errorf("event %d has seq %d", i, e.Seq)
		}
	}
	h, err := History(ld.Events)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "hi"}}},
		{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolCall, ID: "c1", Name: "read", Arguments: `{"path":"a"}`}}},
		{Role: llm.RoleTool, Content: []llm.Block{{Type: llm.BlockToolResult, CallID: "c1", Content: "A"}}},
		{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: "done"}}},
	}
	if d := cmp.Diff(want, h); d != "" {
		t.Errorf("history (-want +got):\n%s", d)
	}
}

func TestHeaderLine(t *testing.T) {
	l := newTestLog(t)
	l.Close()
	b, _ := os.ReadFile(l.Path())
	line := strings.SplitN(string(b), "\n", 2)[0]
	for _, k := range []string{`"type":"session"`, `"version":1`, `"id":"s1"`, `"createdAt"`, `"cwd":"/w"`, `"delegationDepth":0`} {
		if !strings.Contains(line, k) {
			t.Errorf("header %s lacks %s", line, k)
		}
	}
	if strings.Contains(line, "parentSession") || strings.Contains(line, "origin") {
		t.Errorf("root header names a parent: %s", line)
	}
}

func TestTruncatedLastLineDropped(t *testing.T) {
	l := newTestLog(t)
	writeTurn(t, l, 0)
	l.Close()
	full, _ := os.ReadFile(l.Path())
	// Append half of a further event: what a crash mid-write leaves.
	cut := append(append([]byte(nil), full...), []byte(`{"type":"turn/start","seq":9,"ti`)...)
	os.WriteFile(l.Path(), cut, 0o644)
	ld, err := Load(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(ld.Events) != 9 {
		t.Fatalf("got %d events, want the 9 complete ones", len(ld.Events))
	}
	if ld.Repair.DroppedBytes == 0 || ld.Repair.ValidSize != int64(len(full)) {
		t.Errorf("repair = %+v, want the partial line dropped at %d", ld.Repair, len(full))
	}
	if ld.Repair.ClosedTurn {
		t.Error("closed turn reported for a log whose turns are all closed")
	}
	// Load never rewrites the file.
	if b, _ := os.ReadFile(l.Path()); !bytes.Equal(b, cut) {
		t.Error("Load modified the file")
	}
}

func TestUnclosedTurnRepaired(t *testing.T) {
	l := newTestLog(t)
	writeTurn(t, l, 0)
	l.Append(TypeTurnStart, TurnStart{Turn: 1})
	l.Append(TypeUserMessage, UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "again"}}}})
	l.Append(TypeStepStart, StepStart{Turn: 1})
	l.Append(TypeAssistantChunk, AssistantChunk{Turn: 1, Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Delta: "par"}})
	l.Flush()
	// Simulate a crash: the file is not closed; a half line trails.
	f, _ := os.OpenFile(l.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"assistant/chu`)
	f.Close()

	ld, err := Load(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ld.Events); n != 14 {
		t.Fatalf("got %d events, want 13 complete + 1 synthesized", n)
	}
	last := ld.Events[len(ld.Events)-1]
	var te TurnEnd
	if err := last.Decode(&te); err != nil || last.Type != TypeTurnEnd || te.Reason != ReasonInterrupted || te.Turn != 1 || last.Seq != 13 {
		t.Fatalf("last event = %s %s, want turn/end interrupted for turn 1 at seq 13", last.Type, last.Data)
	}
	if !ld.Repair.ClosedTurn || ld.Repair.DroppedBytes == 0 {
		t.Errorf("repair = %+v", ld.Repair)
	}
	// Every event before the damage is intact.
	if ld.Events[12].Type != TypeAssistantChunk {
		t.Errorf("event 12 = %s, want the streamed chunk", ld.Events[12].Type)
	}

	// Reopen writes the repair and continues the sequence.
	l.Close()
	l2, ld2, err := Reopen(l.Path(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := l2.NextTurn(); got != 2 {
		t.Errorf("NextTurn after reopen = %d, want 2", got)
	}
	e, err := l2.Append(TypeTurnStart, TurnStart{Turn: 2})
	if err != nil || e.Seq != 14 {
		t.Fatalf("append after reopen: seq %d err %v, want 14", e.Seq, err)
	}
	l2.Close()
	ld3, err := Load(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if ld3.Repair.DroppedBytes != 0 || len(ld3.Events) != 16 || len(ld2.Events) != 14 {
		t.Errorf("after reopen: %d events, repair %+v", len(ld3.Events), ld3.Repair)
	}
}

func TestLastEventWithoutNewlineKept(t *testing.T) {
	l := newTestLog(t)
	writeTurn(t, l, 0)
	l.Close()
	b, _ := os.ReadFile(l.Path())
	os.WriteFile(l.Path(), bytes.TrimSuffix(b, []byte("\n")), 0o644)
	ld, err := Load(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(ld.Events) != 9 || ld.Events[8].Type != TypeTurnEnd {
		t.Fatalf("complete last event lost: %d events", len(ld.Events))
	}
	l2, _, err := Reopen(l.Path(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	l2.Append(TypeTurnStart, TurnStart{Turn: 1})
	l2.Close()
	ld2, err := Load(l.Path())
	if err != nil || len(ld2.Events) != 11 {
		t.Fatalf("after reopen: err %v, %d events (want 10 + synthesized end)", err, len(ld2.Events))
	}
}

func TestCorruption(t *testing.T) {
	l := newTestLog(t)
	writeTurn(t, l, 0)
	l.Close()
	b, _ := os.ReadFile(l.Path())
	lines := strings.SplitAfter(string(b), "\n")
	tests := []struct {
		name   string
		data   string
		line   int
		reason string
	}{
		{"seq gap", strings.Join(append(append([]string{}, lines[:4]...), lines[5:]...), ""), 5, "gap"},
		{"garbage mid-file", strings.Join(lines[:3], "") + "not json\n" + strings.Join(lines[3:], ""), 4, "not an event"},
		{"no header", strings.Join(lines[1:], ""), 1, "header"},
		{"empty", "", 1, "empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), FileName)
			os.WriteFile(p, []byte(tc.data), 0o644)
			_, err := Load(p)
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want *CorruptError", err)
			}
			if ce.Line != tc.line || !strings.Contains(ce.Reason, tc.reason) || !strings.Contains(err.Error(), p) {
				t.Errorf("err = %v, want line %d mentioning %q and the path", err, tc.line, tc.reason)
			}
			if _, _, err := Reopen(p, Options{}); !errors.As(err, &ce) {
				t.Errorf("Reopen of a corrupt log: err = %v, want refusal", err)
			}
			if got, _ := os.ReadFile(p); string(got) != tc.data {
				t.Error("a corrupt log was rewritten")
			}
		})
	}
}

func TestConcurrentAppendsKeepSeqContiguous(t *testing.T) {
	l := newTestLog(t)
	var seen []int64
	var mu sync.Mutex
	l.observe = func(_ Header, e Event) { mu.Lock(); seen = append(seen, e.Seq); mu.Unlock() }
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				l.Append(TypeJobNotice, JobNotice{JobID: "j", Status: "running"})
			}
		}()
	}
	wg.Wait()
	l.Close()
	ld, err := Load(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(ld.Events) != 800 {
		t.Fatalf("%d events, want 800", len(ld.Events))
	}
	for i, s := range seen {
		if s != int64(i) {
			t.Fatalf("observer saw seq %d at position %d", s, i)
		}
	}
	if _, err := l.Append(TypeJobNotice, JobNotice{}); !errors.Is(err, ErrClosed) {
		t.Errorf("append after close: %v", err)
	}
}

func TestHistorySkipsEmptyAndChunks(t *testing.T) {
	l := newTestLog(t)
	l.Append(TypeTurnStart, TurnStart{})
	l.Append(TypeUserMessage, UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "q"}}}})
	l.Append(TypeAssistantChunk, AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Delta: "x"}})
	l.Append(TypeAssistantMessage, AssistantMessage{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{}}, Usage: &llm.Usage{OutputTokens: 5}})
	l.Append(TypeTurnEnd, TurnEnd{Reason: ReasonMaxTokens})
	l.Close()
	ld, _ := Load(l.Path())
	h, err := History(ld.Events)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 || h[0].Role != llm.RoleUser {
		t.Errorf("history = %+v, want just the user message", h)
	}
}

func TestDanglingCalls(t *testing.T) {
	h := []llm.Message{
		{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolCall, ID: "a"}, {Type: llm.BlockToolCall, ID: "b"}}},
		{Role: llm.RoleTool, Content: []llm.Block{{Type: llm.BlockToolResult, CallID: "a"}}},
	}
	got := DanglingCalls(h)
	if len(got) != 1 || got[0].ID != "b" {
		t.Errorf("dangling = %+v, want [b]", got)
	}
}
