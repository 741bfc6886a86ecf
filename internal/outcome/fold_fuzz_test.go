package outcome

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

// A text delta written as valid JSON other than reins's own encoder writes
// it (a space after the colon, another key order, escapes) still counts
// (issue 14 item 7a: a byte search for `"type":"text-delta"` skipped it,
// so a crashing child that streamed "partial sdk" that way handed the
// parent nothing).
func TestFoldDecodesAnyValidTextDelta(t *testing.T) {
	for _, data := range []string{
		`{"chunk": {"type": "text-delta", "delta": "partial sdk"}}`,
		`{"chunk":{"delta":"partial sdk","type":"text-delta"}}`,
		"{\n  \"chunk\" : {\n    \"type\" : \"text-delta\",\n    \"delta\" : \"partial sdk\"\n  }\n}",
		`{"chunk":{"type":"text\u002ddelta","delta":"partial sdk"}}`,
		`{"chunk":{"\u0074ype":"text-delta","delta":"partial sdk"}}`,
	} {
		e, ok := readEvent(session.TypeAssistantChunk, []byte(data))
		if !ok {
			t.Fatalf("%s does not decode", data)
		}
		got := FinalOutput([]session.Event{e})
		if llm.BlocksText(got) != "partial sdk" {
			t.Errorf("%s: output %q, want %q", data, llm.BlocksText(got), "partial sdk")
		}
	}
}

// referenceDelta is the protocol's meaning of an assistant/chunk event's
// data, by encoding/json alone: the fold's fast path must agree with it.
func referenceDelta(data []byte) (string, bool) {
	var d struct {
		Chunk struct {
			Type  llm.ChunkType `json:"type"`
			Delta string        `json:"delta"`
		} `json:"chunk"`
	}
	if json.Unmarshal(data, &d) != nil || d.Chunk.Type != llm.ChunkTextDelta {
		return "", false
	}
	return d.Chunk.Delta, true
}

// chunkJSON writes a chunk event's data with the whitespace, key order and
// escapes a fuzz input picks.
func chunkJSON(typ, delta string, ws byte, swap, escape bool) []byte {
	sp := [...]string{"", " ", "\n", "\t", "  \r\n"}[int(ws)%5]
	str := func(s string) string {
		b, _ := json.Marshal(s)
		if escape {
			var out strings.Builder
			out.WriteByte('"')
			for _, r := range s {
				if r < 0x10000 {
					fmt.Fprintf(&out, `\u%04x`, r)
				} else {
					out.WriteString(string(r))
				}
			}
			out.WriteByte('"')
			if json.Valid([]byte(out.String())) {
				return out.String()
			}
		}
		return string(b)
	}
	kv := func(k, v string) string { return sp + str(k) + sp + ":" + sp + v + sp }
	fields := []string{kv("type", str(typ)), kv("delta", str(delta))}
	if swap {
		fields[0], fields[1] = fields[1], fields[0]
	}
	return []byte("{" + kv("chunk", "{"+strings.Join(fields, ",")+"}") + "}")
}

func FuzzFoldChunk(f *testing.F) {
	f.Add("text-delta", "partial sdk", byte(1), false, false, []byte(`{"chunk": {"type": "text-delta", "delta": "x"}}`))
	f.Add("text-delta", "a\"b\\c\n", byte(2), true, true, []byte(`{"chunk":{"type":"text\u002ddelta","delta":"x"}}`))
	f.Add("reasoning-delta", "text-delta", byte(0), false, false, []byte(`{"chunk":{"type":"reasoning-delta","delta":"\"type\":\"text-delta\""}}`))
	f.Add("TEXT-DELTA", "", byte(3), true, false, []byte(`{"CHUNK":{"Type":"text-delta","Delta":"y"}}`))
	f.Fuzz(func(t *testing.T, typ, delta string, ws byte, swap, escape bool, raw []byte) {
		for _, data := range [][]byte{chunkJSON(typ, delta, ws, swap, escape), raw} {
			want, ok := referenceDelta(data)
			e, decodes := readEvent(session.TypeAssistantChunk, data)
			if !decodes {
				continue // a corrupt event: the reader refuses it, no fold sees it
			}
			got := llm.BlocksText(FinalOutput([]session.Event{e}))
			if !ok {
				want = ""
			}
			if got != want {
				t.Fatalf("data %q: fold %q, encoding/json %q", data, got, want)
			}
		}
	})
}
