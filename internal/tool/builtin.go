package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"

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

// spec builds a ToolSpec; schema is a JSON Schema object literal.
func spec(name, description, schema string) llm.ToolSpec {
	return llm.ToolSpec{Name: name, Description: description, Parameters: json.RawMessage(schema)}
}

// decodeArgs parses a call's raw JSON arguments into v. Empty arguments
// read as {} since some models send nothing for a call without parameters.
func decodeArgs(args json.RawMessage, v any) error {
	s := bytes.TrimSpace(args)
	if len(s) == 0 {
		s = []byte("{}")
	}
	if err := json.Unmarshal(s, v); err != nil {
		return fmt.Errorf("invalid arguments: %v", err)
	}
	return nil
}

// required checks that a required string parameter was given.
func required(name string, v *string) error {
	if v == nil {
		return fmt.Errorf("missing required parameter %q", name)
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
