package openai

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reinsdev/reins/internal/llm/wirejson"
)

// decodeBoth decodes data the way payload does (fast path, falling back
// to encoding/json) and with encoding/json alone.
func decodeBoth(data []byte) (fast, slow wireChunk, fastOK, slowOK bool) {
	d := &decoder{}
	switch d.fastChunk(data, &fast) {
	case wirejson.OK:
		fastOK = true
	case wirejson.Fallback:
		fast = wireChunk{}
		fastOK = json.Unmarshal(data, &fast) == nil
	}
	// Copy out of the decoder's reused buffer before it is reused.
	fast.Choices = append([]wireChoice(nil), fast.Choices...)
	slowOK = json.Unmarshal(data, &slow) == nil
	return
}

var fastChunkSeeds = []string{
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a\\u00e9\\ud83d\\ude00\"}"}}]},"finish_reason":"tool_calls"}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":"r","reasoning":"x","refusal":null,"function_call":{"name":"f","arguments":"{}"}}}],"usage":{"prompt_tokens":9,"completion_tokens":2,"prompt_cache_hit_tokens":3,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":1}}}`,
	`{"choices":[],"usage":{"prompt_tokens":1.5}}`,
	`{"Choices":[{"Index":1}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}}],"choices":[]}`,
	`{"error":{"message":"x","code":429}}`,
	`{"error":"bare string"}`,
	`{"error":null,"choices":null}`,
	`{"choices":[{"index":0,"delta":{"content":"\ud800 lone \udc00 \\ \/ \b\f\n\r\t \u0000"}}]}`,
	"{\"choices\":[{\"delta\":{\"content\":\"bad utf8 \xff\xfe \xed\xa0\x80\"}}]}",
	`{"choices":[{"delta":{"content":5}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":null,"id":"x"},{"index":-0},{"index":1e2}]}}]}`,
	`{"choices":[{"index":0}] , "x":[1,{"a":[true,false,null,-1.5e+3,"s"]}]}  `,
	`{"choices":[{"index":0}]} x`,
	`{"choices":[{"index":0}],}`,
	`{"a":"\x"}`,
	`{"\u0063hoices":[{"index":0,"delta":{"content":"escaped key"}}]}`,
	`{"choices":[null,{"index":0,"delta":null,"finish_reason":"stop"}]}`,
	`{"usage":{"prompt_tokens_details":null,"completion_tokens_details":{"reasoning_tokens":2,"reasoning_tokens":3}}}`,
	`{"choices":[{"index":99999999999999999999}]}`,
	`{"choices":[{"delta":{"content":"` + "\u2028\u2029" + `"}}],"ünï":1}`,
}

// FuzzFastChunk: the fast path decodes every payload exactly as
// json.Unmarshal does, success or failure.
func FuzzFastChunk(f *testing.F) {
	for _, s := range fastChunkSeeds {
		f.Add([]byte(s))
	}
	_, payloads := framed(f, recordedStream())
	for _, p := range payloads[:50] {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
			return // payload rejects these before decoding
		}
		fast, slow, fastOK, slowOK := decodeBoth(data)
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

// TestFastChunkTakesTheFastPath: the payloads real servers send never fall
// back (the point of the fast path).
func TestFastChunkTakesTheFastPath(t *testing.T) {
	_, payloads := framed(t, recordedStream())
	for _, s := range append(fastChunkSeeds[:3:3], string(payloads[1]), string(payloads[len(payloads)-3])) {
		d := &decoder{}
		var ch wireChunk
		if st := d.fastChunk([]byte(s), &ch); st != wirejson.OK {
			t.Errorf("%s: status %d, want the fast path", s, st)
		}
	}
}
