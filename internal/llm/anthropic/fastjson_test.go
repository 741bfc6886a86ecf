package anthropic

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reinsdev/reins/internal/llm/sse"
	"github.com/reinsdev/reins/internal/llm/wirejson"
)

var fastEventSeeds = []string{
	`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"c","usage":{"input_tokens":10,"cache_read_input_tokens":4,"output_tokens":1}}}`,
	`{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_creation_input_tokens":7,"cache_read_input_tokens":4,"output_tokens":1}}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"read","input":{"a":[1,{"b":null}]}}}`,
	`{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"xyz"}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Some \"quoted\" ünïcode \u00e9 \ud83d\ude00"}}`,
	`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"S"}}`,
	`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":15,"input_tokens":null}}`,
	`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
	`{"type":"message_stop"}`,
	`{"Type":"ping","Index":3}`,
	`{"type":"content_block_stop","index":1.0}`,
	`{"type":"content_block_stop","index":0,"index":1}`,
	`{"delta":null,"content_block":null,"message":null,"usage":null,"error":null,"index":null}`,
	`{"message":{"usage":{"input_tokens":1},"usage":{"output_tokens":2}}}`,
	`{"delta":{"text":5}}`,
	`[1]`,
	`null`,
	`{"type":"x"} trailing`,
	"{\"delta\":{\"text\":\"\xff\"}}",
}

// FuzzFastEvent: the fast path decodes every event exactly as
// json.Unmarshal does, success or failure.
func FuzzFastEvent(f *testing.F) {
	for _, s := range fastEventSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
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
		if !slowOK {
			return
		}
		if diff := cmp.Diff(slow, fast, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%q: decoded differently (-encoding/json +fast):\n%s", data, diff)
		}
	})
}

// TestFastEventTakesTheFastPath: the events Anthropic sends never fall back.
func TestFastEventTakesTheFastPath(t *testing.T) {
	r := sse.NewReader(strings.NewReader(benchBody()), maxEventSize)
	n := 0
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var w wireEvent
		if st := newTranslator(nil).fastEvent(ev.Data, &w); st != wirejson.OK {
			t.Fatalf("%s: status %d, want the fast path", ev.Data, st)
		}
		n++
	}
	if n < 3000 {
		t.Fatalf("only %d events", n)
	}
}
