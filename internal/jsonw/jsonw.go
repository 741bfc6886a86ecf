// Package jsonw appends JSON values byte for byte as encoding/json writes
// them (HTML-safe escaping, its float format, base64 for bytes), for the
// few types that write their own JSON.
//
// Why not encoding/json: a process marshals each type the first time by
// reflection, building the type's encoder, and a reins run is a short
// process that appends every kind of session event once or twice. Those
// first marshals cost 0.3-0.5 ms of a two-step run's 5-7 ms (measured in
// a fresh process, BENCHMARKS.md "The eleventh session"); written by hand
// they cost microseconds. Every hand-written encoder is checked against
// encoding/json on values with every field set (jsonwtest).
package jsonw

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// ErrUnsupported is returned for a value encoding/json refuses: a NaN or
// infinite float, a time whose year is outside 0-9999.
var ErrUnsupported = errors.New("jsonw: value not representable in JSON")

const hex = "0123456789abcdef"

// String appends s as a JSON string, escaped as encoding/json escapes it:
// control characters, <, > and & as \u00XX (the short forms for \b, \f, \n,
// \r and \t), invalid UTF-8 as \ufffd, U+2028 and U+2029 as \u2028 and
// \u2029.
func String(dst []byte, s string) []byte { return appendString(dst, s, true) }

// StringNoHTML is String with <, > and & as they are, as an Encoder with
// SetEscapeHTML(false) writes them.
func StringNoHTML(dst []byte, s string) []byte { return appendString(dst, s, false) }

func appendString(dst []byte, s string, html bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Int appends n.
func Int[T ~int | ~int64](dst []byte, n T) []byte { return strconv.AppendInt(dst, int64(n), 10) }

// Bool appends b.
func Bool(dst []byte, b bool) []byte { return strconv.AppendBool(dst, b) }

// Float appends f in encoding/json's format for a float64: the shortest
// representation, with an exponent only below 1e-6 or from 1e21.
func Float(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, ErrUnsupported
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 as e-9, as encoding/json writes it
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// Bytes appends b as encoding/json writes a []byte: null for nil, else a
// standard base64 string.
func Bytes(dst []byte, b []byte) []byte {
	if b == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// Array appends s as encoding/json writes a slice: null for nil, else
// its elements, each appended by elem, comma-separated in brackets.
func Array[T any](dst []byte, s []T, elem func(dst []byte, v T) []byte) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, v := range s {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = elem(dst, v)
	}
	return append(dst, ']')
}

// MarshalNoHTML is json.Marshal without HTML escaping (an Encoder with
// SetEscapeHTML(false), less its newline): the JSON the providers are sent,
// and the reference the hand-written NoHTML encoders are held to.
func MarshalNoHTML(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Time appends t as time.Time's MarshalJSON writes it (RFC 3339 with
// nanoseconds).
func Time(dst []byte, t time.Time) ([]byte, error) {
	if y := t.Year(); y < 0 || y > 9999 {
		return dst, ErrUnsupported
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"'), nil
}

// Object appends the members of one JSON object, in order, each only
// when its omitempty condition allows it. Its zero value starts the object
// at the first Key.
type Object struct {
	B []byte
	// NoHTML writes strings with StringNoHTML.
	NoHTML bool
	more   bool
}

// Key appends the member name (a plain ASCII name, written as is), with
// the separator before it and the opening brace before the first.
func (o *Object) Key(name string) {
	if o.more {
		o.B = append(o.B, ',', '"')
	} else {
		o.B = append(o.B, '{', '"')
		o.more = true
	}
	o.B = append(o.B, name...)
	o.B = append(o.B, '"', ':')
}

// String appends a string member.
func (o *Object) String(name, v string) {
	o.Key(name)
	o.B = appendString(o.B, v, !o.NoHTML)
}

// OmitString appends a string member unless v is empty (omitempty).
func (o *Object) OmitString(name, v string) {
	if v != "" {
		o.String(name, v)
	}
}

// Int appends an integer member.
func (o *Object) Int(name string, v int64) {
	o.Key(name)
	o.B = strconv.AppendInt(o.B, v, 10)
}

// OmitInt appends an integer member unless v is 0 (omitempty).
func (o *Object) OmitInt(name string, v int64) {
	if v != 0 {
		o.Int(name, v)
	}
}

// Bool appends a boolean member.
func (o *Object) Bool(name string, v bool) {
	o.Key(name)
	o.B = strconv.AppendBool(o.B, v)
}

// OmitBool appends a boolean member unless v is false (omitempty).
func (o *Object) OmitBool(name string, v bool) {
	if v {
		o.Bool(name, v)
	}
}

// End closes the object ({} when it had no member) and returns its bytes.
func (o *Object) End() []byte {
	if !o.more {
		return append(o.B, '{', '}')
	}
	return append(o.B, '}')
}

// Compact appends src, which must be valid JSON, as encoding/json writes
// a json.RawMessage: without the whitespace between tokens, and with html
// its <, >, & and U+2028, U+2029 (which valid JSON holds only in strings)
// escaped as json.Marshal escapes them; without html as an Encoder with
// SetEscapeHTML(false) leaves them (and json.Compact does).
func Compact(dst, src []byte, html bool) []byte {
	start := 0
	inString, escaped := false, false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			case html && (c == '<' || c == '>' || c == '&'):
				dst = append(dst, src[start:i]...)
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
				start = i + 1
			case html && c == 0xe2 && i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xa8:
				dst = append(dst, src[start:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', hex[src[i+2]&0xf])
				start = i + 3
				i += 2
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case ' ', '\t', '\n', '\r':
			dst = append(dst, src[start:i]...)
			start = i + 1
		}
	}
	return append(dst, src[start:]...)
}
