package openai

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/reinsdev/reins/internal/jsonw/jsonwtest"
	"github.com/reinsdev/reins/internal/llm"
)

// TestChatMessageMatchesMarshal holds the hand-written message encoder to
// json.Marshal, with every kind of content the wire sends.
func TestChatMessageMatchesMarshal(t *testing.T) {
	fill := func(m *chatMessage, r *rand.Rand) {
		switch r.IntN(5) {
		case 0:
			m.Content = nil
		case 1:
			m.Content = (*string)(nil)
		case 2:
			m.Content = ptr(jsonwtest.Strings[r.IntN(len(jsonwtest.Strings))])
		case 3:
			var parts []chatPart
			jsonwtest.Fill(reflect.ValueOf(&parts).Elem(), r)
			m.Content = parts
		default:
			m.Content = map[string]int{"odd": 1}
		}
	}
	jsonwtest.CheckWith(t, 3000, fill, json.Marshal, func(m chatMessage) ([]byte, error) { return m.appendJSON(nil), nil })
}

// TestEncodeToolsMatchesMarshal: the tools array is json.Marshal's
// []chatTool, schemas compacted and escaped as it does them, and an invalid
// schema is refused as it refuses it.
func TestEncodeToolsMatchesMarshal(t *testing.T) {
	ref := func(specs []llm.ToolSpec) ([]byte, error) {
		ts := make([]chatTool, 0, len(specs))
		for _, t := range specs {
			ts = append(ts, chatTool{Type: "function", Function: chatToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Schema()}})
		}
		return json.Marshal(ts)
	}
	schemas := []string{"", "null", `{"type":"object"}`, "{\n  \"type\": \"object\", \"description\": \"<a> & b\"\n}", `{"d":"\u2028"}`, `{"a":1,}`}
	r := rand.New(rand.NewPCG(5, 5))
	for i := range 2000 {
		var specs []llm.ToolSpec
		jsonwtest.Fill(reflect.ValueOf(&specs).Elem(), r)
		for j := range specs {
			specs[j].Parameters = json.RawMessage(schemas[r.IntN(len(schemas))])
		}
		want, werr := ref(specs)
		got, gerr := encodeTools(specs)
		if (werr != nil) != (gerr != nil) || werr == nil && string(got) != string(want) {
			t.Fatalf("#%d: encodeTools = %s, %v\nwant %s, %v", i, got, gerr, want, werr)
		}
	}
}
