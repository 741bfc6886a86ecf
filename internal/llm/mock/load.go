package mock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/reinsdev/reins/internal/jsonw"
	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/smallfile"
)

// MaxScriptBytes bounds a script file: far above any real script (the
// long-run benchmark's are a few MiB), far below what could hurt.
const MaxScriptBytes = 64 << 20

// Load reads and parses a script file (YAML or JSON). Only a regular file
// of at most MaxScriptBytes is read: $REINS_MOCK_SCRIPT or --script naming
// /dev/zero or a FIFO is refused, not read without end.
func Load(path string) (*Script, error) {
	data, err := smallfile.Read(path, MaxScriptBytes)
	if err != nil {
		return nil, fmt.Errorf("mock script: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Parse parses a script written in YAML or JSON and validates it. Unknown
// keys are errors: a misspelt key in a test script must not silently turn
// into a different test.
func Parse(data []byte) (*Script, error) {
	var s Script
	if json.Valid(data) {
		// JSON is decoded by encoding/json so its string and number
		// semantics are exactly JSON's, not YAML's reading of them.
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("mock script: %w", err)
		}
	} else {
		if err := unmarshalYAML(data, &s); err != nil {
			return nil, err
		}
	}
	s.normalize()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// errYAMLPanic is the error of a YAML script the decoder panicked on.
var errYAMLPanic = errors.New("mock script: the YAML decoder cannot read this script")

// unmarshalYAML decodes a YAML script strictly. go-yaml panics on some
// malformed input (a tag on a value that should be a list, found by
// FuzzParse); a script is user input, so that is an error, not a crash.
func unmarshalYAML(data []byte, s *Script) (err error) {
	defer func() {
		if recover() != nil {
			*s = Script{}
			err = errYAMLPanic
		}
	}()
	err = yaml.UnmarshalWithOptions(data, s,
		yaml.DisallowUnknownField(),
		yaml.CustomUnmarshaler[json.RawMessage](unmarshalYAMLArguments))
	if err != nil {
		return fmt.Errorf("mock script: %s", yaml.FormatError(err, false, false))
	}
	return nil
}

// normalize compacts JSON object arguments so both script syntaxes yield
// the same wire bytes.
func (s *Script) normalize() {
	fix := func(r *Reply) {
		for i := range r.ToolCalls {
			a := r.ToolCalls[i].Arguments
			if len(a) == 0 || a[0] == '"' {
				continue
			}
			var b bytes.Buffer
			if json.Compact(&b, a) == nil {
				r.ToolCalls[i].Arguments = b.Bytes()
			}
		}
	}
	for i := range s.Replies {
		fix(&s.Replies[i])
	}
	if s.Fallback != nil {
		fix(s.Fallback)
	}
}

var knownFaults = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return map[string]bool{
		"": true, FaultEmpty: true, FaultEmptyBody: true, FaultCut: true, FaultMalformed: true,
		FaultStall: true, FaultContextWindow: true, FaultOverloaded: true, FaultReset: true,
	}
}}

// Validate reports the first reply that cannot be served as written.
func (s *Script) Validate() error {
	for i := range s.Replies {
		if err := s.Replies[i].validate(); err != nil {
			return fmt.Errorf("mock script: replies[%d]: %w", i, err)
		}
	}
	if s.Fallback != nil {
		if err := s.Fallback.validate(); err != nil {
			return fmt.Errorf("mock script: fallback: %w", err)
		}
	}
	return nil
}

func (r *Reply) validate() error {
	switch {
	case !knownFaults.Get()[r.Fault]:
		return fmt.Errorf("unknown fault %q", r.Fault)
	case r.Fault != "" && (r.Status != 0 || r.Body != ""):
		return errors.New("fault excludes status and body")
	case r.Status != 0 && (r.Status < 100 || r.Status > 599):
		return fmt.Errorf("status %d is not an HTTP status", r.Status)
	case r.Chunk < 0:
		return errors.New("chunk must not be negative")
	case r.Barrier < 0:
		return errors.New("barrier must not be negative")
	case r.Delay < 0 || r.ChunkDelay < 0:
		return errors.New("delays must not be negative")
	}
	for i, c := range r.ToolCalls {
		if c.Name == "" {
			return fmt.Errorf("toolCalls[%d]: name is required", i)
		}
	}
	return nil
}

// unmarshalYAMLArguments turns a YAML arguments node into JSON text: a
// string stays a JSON string (sent verbatim), anything else becomes compact
// JSON with the keys in script order.
func unmarshalYAMLArguments(m *json.RawMessage, src []byte) error {
	var v any
	if err := yaml.UnmarshalWithOptions(src, &v, yaml.UseOrderedMap()); err != nil {
		return err
	}
	if v == nil {
		*m = nil
		return nil
	}
	var b bytes.Buffer
	if err := writeJSON(&b, v); err != nil {
		return err
	}
	*m = b.Bytes()
	return nil
}

// writeJSON encodes a YAML-decoded value, keeping MapSlice key order.
func writeJSON(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case yaml.MapSlice:
		b.WriteByte('{')
		for i, it := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(fmt.Sprint(it.Key))
			b.Write(k)
			b.WriteByte(':')
			if err := writeJSON(b, it.Value); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		enc, err := jsonw.MarshalNoHTML(v)
		if err != nil {
			return fmt.Errorf("arguments: %w", err)
		}
		b.Write(enc)
	}
	return nil
}

// UnmarshalJSON reads "150ms" or an integer number of milliseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	return d.set(v)
}

// UnmarshalYAML reads "150ms" or an integer number of milliseconds.
func (d *Duration) UnmarshalYAML(unmarshal func(any) error) error {
	var v any
	if err := unmarshal(&v); err != nil {
		return err
	}
	return d.set(v)
}

func (d *Duration) set(v any) error {
	switch v := v.(type) {
	case string:
		v = strings.TrimSpace(v)
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			*d = Duration(time.Duration(ms) * time.Millisecond)
			return nil
		}
		x, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("duration %q: want a Go duration like \"150ms\"", v)
		}
		*d = Duration(x)
	case float64:
		*d = Duration(time.Duration(v * float64(time.Millisecond)))
	case uint64:
		*d = Duration(time.Duration(v) * time.Millisecond)
	case int64:
		*d = Duration(time.Duration(v) * time.Millisecond)
	case int:
		*d = Duration(time.Duration(v) * time.Millisecond)
	case nil:
		*d = 0
	default:
		return fmt.Errorf("duration: unexpected %T", v)
	}
	return nil
}

// MarshalJSON writes the duration as "150ms".
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// MarshalYAML writes the duration as "150ms".
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// ArgumentsText is the argument text sent on the wire: a JSON string's
// content verbatim, other JSON as is, and "{}" when empty.
func (c ToolCall) ArgumentsText() string {
	a := bytes.TrimSpace(c.Arguments)
	if len(a) == 0 {
		return "{}"
	}
	if a[0] == '"' {
		var s string
		if json.Unmarshal(a, &s) == nil {
			return s
		}
	}
	return string(c.Arguments)
}

// DefaultScript answers every request with "mock: " followed by the
// request's last user or tool message text. `reins mock-llm` without
// --script and the `mock` provider without a script use it.
func DefaultScript() *Script {
	return &Script{Fallback: &Reply{Repeat: true, Echo: true, Text: "mock: "}}
}
