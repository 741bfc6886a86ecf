package llm

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/jsonw/jsonwtest"
)

func TestAppendJSON(t *testing.T) {
	const n = 3000
	noErr := func(f func([]byte) []byte) func() ([]byte, error) {
		return func() ([]byte, error) { return f(nil), nil }
	}
	jsonwtest.Check(t, n, func(b Block) ([]byte, error) { return noErr(b.AppendJSON)() })
	jsonwtest.Check(t, n, func(im Image) ([]byte, error) { return noErr(im.AppendJSON)() })
	jsonwtest.Check(t, n, func(m Message) ([]byte, error) { return noErr(m.AppendJSON)() })
	jsonwtest.Check(t, n, func(f Finish) ([]byte, error) { return noErr(f.AppendJSON)() })
	jsonwtest.Check(t, n, func(u Usage) ([]byte, error) { return u.AppendJSON(nil) })
	jsonwtest.Check(t, n, func(c Chunk) ([]byte, error) { return c.AppendJSON(nil) })
}

func TestAppendSchema(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70)
	for _, s := range []string{
		``, `null`, ` null `, `{"type":"object","properties":{}}`,
		`{"type": "object",` + "\n" + ` "properties": {"p": {"type": "string", "description": "a <path> & more"}}}`,
		`{"description":"<b>"}`, `{"description":"line\u2028sep"}`, "{\"description\":\"raw \u2028 sep\"}",
		`{"a":[1,2.5e-3,true,false,null,"x\"y"]}`, deep, `{"a":1`, `{"a":01}`, `{"a":"\x01"}`, `[1,]`,
		`{"a":"é"}`, "{\"a\":\"\xff\"}", ` {"a":1}`, `{"a":1} `,
	} {
		spec := ToolSpec{Name: "t", Parameters: json.RawMessage(s)}
		want, werr := json.Marshal(spec.Schema())
		got, gerr := spec.AppendSchema([]byte("x"), true)
		if (werr != nil) != (gerr != nil) || werr == nil && string(got) != "x"+string(want) {
			t.Errorf("AppendSchema(%q, html) = %s, %v; want %s, %v", s, got, gerr, want, werr)
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		werr = enc.Encode(spec.Schema())
		got, gerr = spec.AppendSchema(nil, false)
		if (werr != nil) != (gerr != nil) || werr == nil && string(got) != strings.TrimSuffix(b.String(), "\n") {
			t.Errorf("AppendSchema(%q) = %s, %v; want %s, %v", s, got, gerr, b.String(), werr)
		}
	}
}

func FuzzAppendSchema(f *testing.F) {
	f.Add(`{"type": "object", "description": "<x> & y"}`, true)
	f.Add(`{"a":01}`, false)
	f.Fuzz(func(t *testing.T, s string, html bool) {
		spec := ToolSpec{Parameters: json.RawMessage(s)}
		var want []byte
		var werr error
		if html {
			want, werr = json.Marshal(spec.Schema())
		} else {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			werr = enc.Encode(spec.Schema())
			want = bytes.TrimSuffix(b.Bytes(), []byte("\n"))
		}
		got, gerr := spec.AppendSchema(nil, html)
		if (werr != nil) != (gerr != nil) || werr == nil && !bytes.Equal(got, want) {
			t.Errorf("AppendSchema(%q, %v) = %s, %v; want %s, %v", s, html, got, gerr, want, werr)
		}
	})
}
