package outcome

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinsdev/reins/internal/jsonw/jsonwtest"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

// TestFoldLiveMatchesLog: a live event's value (session.Event.Value) folds
// to what its data folds to, hostile strings included, and the fold keeps
// its own copy of what it selected.
func TestFoldLiveMatchesLog(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for i := range 3000 {
		var d session.AssistantMessage
		jsonwtest.Fill(reflect.ValueOf(&d).Elem(), r)
		data, err := json.Marshal(d)
		if err != nil {
			continue // a NaN cost: Append refuses it before any observer
		}
		var live, log Fold
		live.Push(session.Event{Type: session.TypeAssistantMessage, Data: data, Value: d})
		log.Push(session.Event{Type: session.TypeAssistantMessage, Data: data})
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
	data, _ := json.Marshal(d)
	var f Fold
	f.Push(session.Event{Type: session.TypeAssistantMessage, Data: data, Value: d})
	if got := f.Collect(); len(got) != 1 || got[0].Text != "bad \ufffd" {
		t.Errorf("fold of invalid UTF-8 = %+v, want the log's U+FFFD", got)
	}
}

// TestFoldLiveChunksMatchLog: streamed chunks fold live as from the log,
// hostile deltas and chunk types included.
func TestFoldLiveChunksMatchLog(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	types := []llm.ChunkType{llm.ChunkTextDelta, llm.ChunkReasoningDelta, llm.ChunkToolCallDelta, llm.ChunkBlockStart, "text-delta\xff"}
	for i := range 2000 {
		var live, log Fold
		for range r.IntN(6) {
			var d session.AssistantChunk
			jsonwtest.Fill(reflect.ValueOf(&d).Elem(), r)
			d.Chunk.Type = types[r.IntN(len(types))]
			data, err := json.Marshal(d)
			if err != nil {
				continue
			}
			live.Push(session.Event{Type: session.TypeAssistantChunk, Data: data, Value: d})
			log.Push(session.Event{Type: session.TypeAssistantChunk, Data: data})
		}
		end := session.Event{Type: session.TypeStepEnd, Data: json.RawMessage(`{"turn":0,"step":0}`)}
		live.Push(end)
		log.Push(end)
		if diff := cmp.Diff(log.Collect(), live.Collect()); diff != "" {
			t.Fatalf("#%d: live fold differs from the log's (-log +live):\n%s", i, diff)
		}
	}
}
