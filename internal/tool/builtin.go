package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/search"
)

// Builtins returns the built-in tools: read, write, edit, multi_edit, bash,
// grep, glob and ls (docs/agents.md).
func Builtins() []Tool {
	return []Tool{
		readTool{}, writeTool{}, editTool{}, multiEditTool{}, applyPatchTool{}, bashTool{}, bashOutputTool{}, bashKillTool{},
		grepTool{}, globTool{}, lsTool{},
	}
}

// NewBuiltinRegistry returns a registry holding the built-in tools.
func NewBuiltinRegistry() *Registry { return NewRegistry(Builtins()...) }

// spec builds a ToolSpec whose parameters are a closed JSON Schema object
// (see object). Each built-in tool builds its spec once, on first use
// (a lazy.Value beside its Spec method: no package initialisation): a session asks for every
// tool's spec when it registers it and at each model request, and
// building it each time was 40 % of a two-step run's allocated bytes. The
// spec's Parameters are shared: callers that change them clone first.
func spec(name, description string, required []string, properties ...string) llm.ToolSpec {
	return llm.ToolSpec{Name: name, Description: description, Parameters: json.RawMessage(object("", required, properties...))}
}

// object is the JSON Schema text of an object that takes the given
// properties (each a `"name": {schema}` member) and no others, of which the
// required ones must be given. indent is the indentation of the line that
// holds the object; a property may span lines, indented to stand below it.
func object(indent string, required []string, properties ...string) string {
	// One allocation of the final size: in a one-shot `reins run` these
	// are among the process's first allocations, where a growing builder
	// and concatenated pieces (fresh spans, zeroed, faulted in) cost ~0.1
	// ms of a two-step's CPU (BENCHMARKS.md, "The fifteenth session").
	n := 100 + 6*len(indent)
	for _, p := range properties {
		n += len(indent) + 6 + len(p)
	}
	for _, r := range required {
		n += len(r) + 4
	}
	var b strings.Builder
	b.Grow(n)
	w := func(parts ...string) {
		for _, p := range parts {
			b.WriteString(p)
		}
	}
	w("{\n", indent, `  "type": "object",`+"\n", indent, `  "properties": {`+"\n")
	for i, p := range properties {
		if i > 0 {
			w(",\n")
		}
		w(indent, "    ", p)
	}
	w("\n", indent, "  },\n")
	if len(required) > 0 {
		w(indent, `  "required": [`)
		for i, r := range required {
			if i > 0 {
				w(", ")
			}
			var q [64]byte
			b.Write(strconv.AppendQuote(q[:0], r))
		}
		w("],\n")
	}
	w(indent, `  "additionalProperties": false`+"\n", indent, "}")
	return b.String()
}

// Properties that more than one tool takes.
const (
	pathProperty = `"path": {"type": "string", "description": "File path, relative to the workspace or absolute."}`
)

// need is a required string parameter: its name and the field it decodes
// into.
type need struct {
	name string
	v    **string
}

// decodeArgs parses a call's raw JSON arguments into v and checks that each
// of the needed parameters was given. Empty arguments read as {} since some
// models send nothing for a call without parameters.
func decodeArgs(args json.RawMessage, v any, needs ...need) error {
	s := bytes.TrimSpace(args)
	if len(s) == 0 {
		s = []byte("{}")
	}
	if err := json.Unmarshal(s, v); err != nil {
		return fmt.Errorf("invalid arguments: %v", err)
	}
	for _, n := range needs {
		if *n.v == nil {
			return fmt.Errorf("missing required parameter %q", n.name)
		}
	}
	return nil
}

// sniff reads up to search.SniffLen bytes of r and reports whether they hold a NUL
// byte, the mark of a binary file; the bytes read are returned so the caller
// can go on reading the whole stream.
func sniff(r io.Reader) (head []byte, binary bool, err error) {
	buf := make([]byte, search.SniffLen)
	n, err := io.ReadFull(r, buf)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	buf = buf[:n]
	return buf, search.Binary(buf), err
}

// osErr drops the path from an *fs.PathError: results name the path the
// model gave, not the resolved one.
func osErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Plural formats a count with its noun: "1 byte", "2 bytes" (the words
// of the tools' results, which the screen repeats).
func Plural(n int, noun string) string { return plural(n, noun) }

// plural formats a count with its noun: "1 byte", "2 bytes".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
