package responses

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reinsdev/reins/internal/llm/wirejson"
)

var fastEventSeeds = []string{
	`{"type":"response.created","sequence_number":0,"response":{"id":"r","object":"response","status":"in_progress","output":[],"usage":null}}`,
	`{"type":"response.output_item.added","output_index":0,"item":{"id":"fc","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"read"}}`,
	`{"type":"response.function_call_arguments.delta","item_id":"fc","output_index":0,"delta":"{\"path\":\"notes.txt\"}"}`,
	`{"type":"response.output_item.done","output_index":0,"item":{"type":"message","content":[{"type":"output_text","text":"hi","annotations":[]},{"type":"refusal","refusal":"no"}],"summary":null}}`,
	`{"type":"response.output_item.done","output_index":1,"item":{"type":"reasoning","summary":[{"type":"summary_text","text":"r"}],"encrypted_content":"gAAA"}}`,
	`{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":2},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":1},"total_tokens":13}}}`,
	`{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}}`,
	`{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"x"}}}`,
	`{"type":"error","code":429,"message":"slow down"}`,
	`{"type":"error","code":null,"message":null}`,
	`{"Type":"response.output_text.delta","delta":"case"}`,
	`{"type":"a","type":"b"}`,
	`{"type":"response.output_text.delta","output_index":1.5,"delta":"x"}`,
	`{"type":"response.output_text.delta","output_index":null,"delta":"\ud800 \u00e9 \\n"}`,
	"{\"type\":\"response.output_text.delta\",\"delta\":\"bad \xff\"}",
	`{"type":"response.output_item.added","item":{"content":[null,{"text":1}]}}`,
	`{"type":"response.completed","response":{"usage":{"input_tokens":99999999999999999999}}}`,
	`{"type":"x"} trailing`,
	`{"type":"x",}`,
	`{"\u0074ype":"escaped key"}`,
}

// FuzzFastEvent: the fast path decodes every event exactly as
// json.Unmarshal does, success or failure.
func FuzzFastEvent(f *testing.F) {
	for _, s := range fastEventSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
			return // feed rejects these before decoding
		}
		tr := newTranslator(nil)
		var fast, slow wireEvent
		fastOK := true
		switch tr.fastEvent(data, &fast) {
		case wirejson.Invalid:
			fastOK = false
		case wirejson.Fallback:
			fast = wireEvent{}
			fastOK = json.Unmarshal(data, &fast) == nil
		}
		slowOK := json.Unmarshal(data, &slow) == nil
		if fastOK != slowOK {
			t.Fatalf("%q: fast path ok=%v, encoding/json ok=%v", data, fastOK, slowOK)
		}
		if slowOK {
			if diff := cmp.Diff(slow, fast, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("%q: decoded differently (-encoding/json +fast):\n%s", data, diff)
			}
		}
	})
}

// TestFastEventTakesTheCommonEvents: the events a stream is made of
// decode on the fast path, without falling back.
func TestFastEventTakesTheCommonEvents(t *testing.T) {
	for _, s := range fastEventSeeds[:10] {
		var ev wireEvent
		if got := newTranslator(nil).fastEvent([]byte(s), &ev); got != wirejson.OK {
			t.Errorf("%s: status %v, want OK", s, got)
		}
	}
}
