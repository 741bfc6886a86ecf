package session

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

// TestEventLineMatchesMarshal: the hand-built log line is byte for byte
// what json.Marshal writes for the event, whatever the data holds.
func TestEventLineMatchesMarshal(t *testing.T) {
	times := []time.Time{
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 120000000, time.UTC),
		time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600)),
		{},
	}
	data := []any{
		TurnStart{Turn: 3},
		ToolResult{CallID: "c1", Content: "<html> & \"quotes\" \u2028 ünï \x01 \\ /", IsError: true},
		AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Delta: "a\nb\tc"}},
		json.RawMessage(` { "spaced" : [1, 2] , "h": "<b>" } `),
		nil,
		map[string]any{"z": 1, "a": []string{"x"}},
	}
	types := []string{TypeTurnStart, TypeToolResult, "a-b_c.d", "needs \"escaping\" <x>", "ünï"}
	for _, ti := range times {
		for _, d := range data {
			raw, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			for _, typ := range types {
				e := Event{Type: typ, Seq: 12345, Time: ti, Data: raw}
				want, err := json.Marshal(e)
				if err != nil {
					t.Fatal(err)
				}
				got, err := appendEventLine([]byte("prefix"), e)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != "prefix"+string(want)+"\n" {
					t.Errorf("line differs:\n got %s\nwant %s", got, want)
				}
			}
		}
	}
}
