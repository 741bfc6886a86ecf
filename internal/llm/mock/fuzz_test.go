package mock

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

// FuzzParse parses arbitrary bytes as a mock script. Invariants: no panic;
// an error comes with no script; a parsed script validates; and a parsed
// script written back as JSON parses to the same script (the two syntaxes
// agree, and nothing a script says is lost on the way).
func FuzzParse(f *testing.F) {
	// The scripts the CLI tests really run, then a few written to reach
	// every field and form.
	archives, _ := filepath.Glob(filepath.Join("..", "..", "..", "cmd", "reins", "testdata", "script", "*.txtar"))
	for _, p := range archives {
		a, err := txtar.ParseFile(p)
		if err != nil {
			continue
		}
		for _, file := range a.Files {
			if ext := filepath.Ext(file.Name); ext == ".yaml" || ext == ".yml" || ext == ".json" {
				f.Add(file.Data)
			}
		}
	}
	for _, s := range []string{
		"replies:\n  - match: weather\n    text: sunny\n    delay: 150ms\n    chunkDelay: 20\n    chunk: 3\n    toolCalls:\n      - id: c1\n        name: read\n        arguments:\n          path: a.go\n          lines: [1, 2]\n      - name: bad\n        arguments: '{\"path\":'\n",
		"replies:\n  - fault: stall\n    keepAlive: true\n    usage: {input: 10, output: 2, cacheRead: 1, reasoning: 3}\nfallback:\n  status: 429\n  headers: {Retry-After: \"2\"}\n  echo: true\n",
		`{"replies": [{"match": "x", "repeat": true, "reasoning": "r", "text": "t", "finish": "length", "barrier": 2, "delay": 1.5}], "fallback": {"status": 500, "body": "{\"error\":{}}"}}`,
		`{"replies": [{"toolCalls": [{"name": "n", "arguments": "raw \u00e9"}, {"name": "m", "arguments": null}, {"name": "o", "arguments": [1, {"a": 2}]}]}]}`,
		"replies:\n  - text: |\n      a block\n      of text\n    finish: none\n",
		"{}",
		"",
	} {
		f.Add([]byte(s))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			if s != nil {
				t.Fatalf("error %v with a script", err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("parsed script does not validate: %v", err)
		}
		for _, r := range append(append([]Reply(nil), s.Replies...), fallbackOf(s)...) {
			for _, c := range r.ToolCalls {
				_ = c.ArgumentsText()
			}
		}
		if !utf8.Valid(data) {
			return // JSON cannot carry invalid UTF-8 text through
		}
		j, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("parsed script does not marshal: %v", err)
		}
		back, err := Parse(j)
		if err != nil {
			t.Fatalf("parsed script written as JSON does not parse: %v\n%s", err, j)
		}
		if d := cmp.Diff(canonical(s), canonical(back)); d != "" {
			t.Fatalf("script changed on a JSON round trip (-parsed +again):\n%s\nJSON: %s", d, j)
		}
	})
}

// canonical returns a copy of s in which empty and absent lists and maps
// are the same, and arguments are compared as JSON values (json.Marshal
// writes "&" as "\u0026": the same value, other bytes).
func canonical(s *Script) *Script {
	fix := func(r Reply) Reply {
		if len(r.Headers) == 0 {
			r.Headers = nil
		}
		var calls []ToolCall
		for _, c := range r.ToolCalls {
			c.Arguments = jsonValue(c.Arguments)
			calls = append(calls, c)
		}
		r.ToolCalls = calls
		return r
	}
	out := &Script{}
	for _, r := range s.Replies {
		out.Replies = append(out.Replies, fix(r))
	}
	if s.Fallback != nil {
		fb := fix(*s.Fallback)
		out.Fallback = &fb
	}
	return out
}

// jsonValue re-encodes a JSON value canonically: numbers kept as written,
// keys sorted, no HTML escaping.
func jsonValue(r json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(r)
	if len(t) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return t
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return t
	}
	return bytes.TrimSpace(b.Bytes())
}

func fallbackOf(s *Script) []Reply {
	if s.Fallback == nil {
		return nil
	}
	return []Reply{*s.Fallback}
}
