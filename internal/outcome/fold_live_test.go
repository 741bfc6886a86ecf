package outcome

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinsdev/reins/internal/jsonw/jsonwtest"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

// appended appends data to l and returns the event as the log's observers
// get it (live: the writer's value as payload where it says what the data
// says) and as a reader of the log gets it (the data decoded); ok is false
// when Append refuses data (a NaN cost).
func appended(t *testing.T, l *session.Log, typ string, data any) (live, read session.Event, ok bool) {
	t.Helper()
	live, err := l.Append(typ, data)
	if err != nil {
		return live, read, false
	}
	read, err = session.NewEvent(typ, live.Seq, live.Time, live.Data)
	if err != nil {
		t.Fatalf("seq %d does not read back: %v", live.Seq, err)
	}
	return live, read, true
}

func testLog(t *testing.T) *session.Log {
	t.Helper()
	l, err := session.Create(t.TempDir(), session.Header{ID: "s"}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestFoldLiveMatchesLog: a live event's payload (the writer's value)
// folds to what its data folds to, hostile strings included, and the fold
// keeps its own copy of what it selected.
func TestFoldLiveMatchesLog(t *testing.T) {
	l := testLog(t)
	r := rand.New(rand.NewPCG(7, 7))
	for i := range 3000 {
		var d session.AssistantMessage
		jsonwtest.Fill(reflect.ValueOf(&d).Elem(), r)
		le, re, ok := appended(t, l, session.TypeAssistantMessage, d)
		if !ok {
			continue // a NaN cost: Append refuses it before any observer
		}
		var live, log Fold
		live.Push(le)
		log.Push(re)
		want := log.Collect()
		if len(d.Message.Content) > 0 {
			d.Message.Content[0].Text = "changed by the writer afterwards"
		}
		if diff := cmp.Diff(want, live.Collect()); diff != "" {
			t.Fatalf("#%d: live fold differs from the log's (-log +live):\n%s", i, diff)
		}
	}
	// The invalid UTF-8 case on its own, so it cannot go untested.
	d := session.AssistantMessage{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: "bad \xff"}}}}
	le, _, _ := appended(t, l, session.TypeAssistantMessage, d)
	var f Fold
	f.Push(le)
	if got := f.Collect(); len(got) != 1 || got[0].Text != "bad \ufffd" {
		t.Errorf("fold of invalid UTF-8 = %+v, want the log's U+FFFD", got)
	}
}

// TestFoldLiveChunksMatchLog: streamed chunks fold live as from the log,
// hostile deltas and chunk types included.
func TestFoldLiveChunksMatchLog(t *testing.T) {
	l := testLog(t)
	r := rand.New(rand.NewPCG(9, 9))
	types := []llm.ChunkType{llm.ChunkTextDelta, llm.ChunkReasoningDelta, llm.ChunkToolCallDelta, llm.ChunkBlockStart, "text-delta\xff"}
	for i := range 2000 {
		var live, log Fold
		for range r.IntN(6) {
			var d session.AssistantChunk
			jsonwtest.Fill(reflect.ValueOf(&d).Elem(), r)
			d.Chunk.Type = types[r.IntN(len(types))]
			le, re, ok := appended(t, l, session.TypeAssistantChunk, d)
			if !ok {
				continue
			}
			live.Push(le)
			log.Push(re)
		}
		le, re, _ := appended(t, l, session.TypeStepEnd, session.StepEnd{})
		live.Push(le)
		log.Push(re)
		if diff := cmp.Diff(log.Collect(), live.Collect()); diff != "" {
			t.Fatalf("#%d: live fold differs from the log's (-log +live):\n%s", i, diff)
		}
	}
}
