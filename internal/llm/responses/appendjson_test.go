package responses

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/reinsdev/reins/internal/jsonw"
	"github.com/reinsdev/reins/internal/jsonw/jsonwtest"
	"github.com/reinsdev/reins/internal/llm"
)

// TestEncodeMatchesEncoder holds the hand-written request and tools
// encoders to jsonw.MarshalNoHTML (encoding/json without HTML escaping), with every
// kind of output a function_call_output carries.
func TestEncodeMatchesEncoder(t *testing.T) {
	fill := func(r *request, rnd *rand.Rand) {
		for i := range r.Input {
			switch rnd.IntN(5) {
			case 0:
				r.Input[i].Output = nil
			case 1:
				r.Input[i].Output = jsonwtest.Strings[rnd.IntN(len(jsonwtest.Strings))]
			case 2:
				var parts []outputPart
				jsonwtest.Fill(reflect.ValueOf(&parts).Elem(), rnd)
				r.Input[i].Output = parts
			case 3:
				r.Input[i].Output = []outputPart(nil)
			default:
				r.Input[i].Output = map[string]int{"odd": 1}
			}
		}
	}
	jsonwtest.CheckWith(t, 3000, fill, jsonw.MarshalNoHTML, func(r request) ([]byte, error) { return r.appendJSON(nil), nil })

	ref := func(specs []llm.ToolSpec) ([]byte, error) {
		ts := make([]tool, 0, len(specs))
		for _, t := range specs {
			ts = append(ts, tool{Type: "function", Name: t.Name, Description: t.Description, Parameters: t.Schema()})
		}
		return jsonw.MarshalNoHTML(ts)
	}
	schemas := []string{"", "null", `{"type":"object"}`, "{\n  \"type\": \"object\", \"description\": \"<a> & b\"\n}", `{"d":"\u2028"}`, `{"a":1,}`}
	rnd := rand.New(rand.NewPCG(5, 5))
	for i := range 2000 {
		var specs []llm.ToolSpec
		jsonwtest.Fill(reflect.ValueOf(&specs).Elem(), rnd)
		for j := range specs {
			specs[j].Parameters = json.RawMessage(schemas[rnd.IntN(len(schemas))])
		}
		want, werr := ref(specs)
		got, gerr := encodeTools(specs)
		if (werr != nil) != (gerr != nil) || werr == nil && string(got) != string(want) {
			t.Fatalf("#%d: encodeTools = %s, %v\nwant %s, %v", i, got, gerr, want, werr)
		}
	}
}
