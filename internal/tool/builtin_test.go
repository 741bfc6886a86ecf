package tool

import (
	"encoding/json"
	"testing"
)

// TestObjectText: the schema text object writes, byte for byte (the
// models have seen this text since wave 1: a change in it is a change in
// every request), at the top level and nested.
func TestObjectText(t *testing.T) {
	for _, c := range []struct {
		indent   string
		required []string
		props    []string
		want     string
	}{
		{"", nil, []string{`"a": {"type": "string"}`}, `{
  "type": "object",
  "properties": {
    "a": {"type": "string"}
  },
  "additionalProperties": false
}`},
		{"    ", []string{"a", "b"}, []string{`"a": {"type": "string"}`, `"b": {"type": "integer"}`}, `{
      "type": "object",
      "properties": {
        "a": {"type": "string"},
        "b": {"type": "integer"}
      },
      "required": ["a", "b"],
      "additionalProperties": false
    }`},
	} {
		if got := object(c.indent, c.required, c.props...); got != c.want {
			t.Errorf("object(%q, %q, …):\n%s\nwant\n%s", c.indent, c.required, got, c.want)
		}
	}
}

// TestObjectAllocatesOnce: the text is written into one buffer of its
// final size. The built-in specs are among a one-shot run's first
// allocations, where growing a builder cost ~0.1 ms (BENCHMARKS.md, "The
// fifteenth session").
func TestObjectAllocatesOnce(t *testing.T) {
	props := []string{pathProperty, `"content": {"type": "string", "description": "The full content to write."}`}
	if n := testing.AllocsPerRun(100, func() { _ = object("      ", []string{"path", "content"}, props...) }); n != 1 {
		t.Errorf("object allocated %v times, want 1", n)
	}
}

// TestBuiltinSpecsAreClosedObjects: every built-in tool's parameters are
// a JSON Schema object that takes no other properties and requires only
// properties it has.
func TestBuiltinSpecsAreClosedObjects(t *testing.T) {
	for _, tl := range Builtins() {
		s := tl.Spec()
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
			Additional *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(s.Parameters, &schema); err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		if schema.Type != "object" || schema.Additional == nil || *schema.Additional || len(schema.Properties) == 0 {
			t.Errorf("%s: not a closed object: %s", s.Name, s.Parameters)
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Errorf("%s: requires %q, which it does not have", s.Name, r)
			}
		}
	}
}
