// Package wirejson is the adapters' fast path for decoding stream payloads:
// a validating JSON reader over a byte slice that reads the few fields an
// adapter wants without reflection and, in the common case, without
// allocating more than the strings it returns.
//
// It is deliberately partial. Whenever a payload holds anything it does not
// handle exactly as encoding/json.Unmarshal would — a string with escapes or
// invalid UTF-8, a non-integer number where an int is wanted, a key that
// matches a wanted field only case-insensitively or through an escape, a
// repeated wanted key, deep nesting, a type mismatch — the reader reports
// Fallback and the adapter decodes the same payload with encoding/json,
// which then decides. So behaviour is encoding/json's; only the cost of the
// common payload changes. Invalid JSON is reported as Invalid only when it
// is certain; anything doubtful is a Fallback.
package wirejson

import (
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Status is the outcome of a read.
type Status uint8

const (
	OK       Status = iota
	Fallback        // decode with encoding/json instead
	Invalid         // not JSON: encoding/json would fail too
)

// maxDepth bounds nesting in skipped values; deeper payloads fall back.
const maxDepth = 64

// Reader reads one JSON value from a byte slice. Methods record the first
// problem in Status and are no-ops afterwards, so a decoder can run to the
// end and check once.
type Reader struct {
	data   []byte
	pos    int
	Status Status
	depth  int
	// Spaced is set once whitespace outside a string has been skipped:
	// the bytes read so far are not compact JSON.
	Spaced bool
}

// Reset starts reading data.
func (r *Reader) Reset(data []byte) { *r = Reader{data: data} }

func (r *Reader) fail(s Status) {
	if r.Status == OK {
		r.Status = s
	}
}

func (r *Reader) ws() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
			r.Spaced = true
		default:
			return
		}
	}
}

// peek returns the next non-space byte (0 at the end).
func (r *Reader) peek() byte {
	r.ws()
	if r.pos >= len(r.data) {
		return 0
	}
	return r.data[r.pos]
}

// End checks that only whitespace follows the value.
func (r *Reader) End() {
	if r.Status == OK {
		if r.ws(); r.pos < len(r.data) {
			r.fail(Invalid)
		}
	}
}

// Null consumes a null and reports whether there was one.
func (r *Reader) Null() bool {
	if r.Status != OK || r.peek() != 'n' {
		return false
	}
	r.literal("null")
	return r.Status == OK
}

func (r *Reader) literal(lit string) {
	if len(r.data)-r.pos < len(lit) || string(r.data[r.pos:r.pos+len(lit)]) != lit {
		r.fail(Invalid)
		return
	}
	r.pos += len(lit)
}

// Object calls field for every key of an object, with the raw key bytes
// (valid until the next call); field must consume the value (read or
// Skip it). A null is an object with no keys, as encoding/json treats it
// for a struct. Keys with escapes make the read fall back.
func (r *Reader) Object(field func(key []byte)) {
	if r.Status != OK {
		return
	}
	switch r.peek() {
	case 'n':
		r.literal("null")
		return
	case '{':
	default:
		r.fail(Fallback) // a type mismatch: let encoding/json say so
		return
	}
	r.pos++
	if r.peek() == '}' {
		r.pos++
		return
	}
	for r.Status == OK {
		if r.peek() != '"' {
			r.fail(Invalid)
			return
		}
		key, plain := r.rawString()
		if r.Status != OK {
			return
		}
		if !plain {
			r.fail(Fallback)
			return
		}
		if r.peek() != ':' {
			r.fail(Invalid)
			return
		}
		r.pos++
		field(key)
		if r.Status != OK {
			return
		}
		switch r.peek() {
		case ',':
			r.pos++
		case '}':
			r.pos++
			return
		default:
			r.fail(Invalid)
			return
		}
	}
}

// Array calls elem for every element of an array; elem must consume it.
// A null is an empty array.
func (r *Reader) Array(elem func()) {
	if r.Status != OK {
		return
	}
	switch r.peek() {
	case 'n':
		r.literal("null")
		return
	case '[':
	default:
		r.fail(Fallback)
		return
	}
	r.pos++
	if r.peek() == ']' {
		r.pos++
		return
	}
	for r.Status == OK {
		elem()
		if r.Status != OK {
			return
		}
		switch r.peek() {
		case ',':
			r.pos++
		case ']':
			r.pos++
			return
		default:
			r.fail(Invalid)
			return
		}
	}
}

// rawString consumes a string and returns its bytes between the quotes;
// plain is false when it holds an escape or invalid UTF-8 (the bytes are
// then not its value). The string is validated either way.
func (r *Reader) rawString() (raw []byte, plain bool) {
	r.pos++ // the opening quote
	start := r.pos
	plain = true
	ascii := true
	for r.pos < len(r.data) {
		c := r.data[r.pos]
		switch {
		case c == '"':
			raw = r.data[start:r.pos]
			r.pos++
			if !ascii && !utf8.Valid(raw) {
				plain = false
			}
			return raw, plain
		case c == '\\':
			plain = false
			r.pos++
			if r.pos >= len(r.data) {
				r.fail(Invalid)
				return nil, false
			}
			switch r.data[r.pos] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				r.pos++
			case 'u':
				if len(r.data)-r.pos < 5 {
					r.fail(Invalid)
					return nil, false
				}
				for _, h := range r.data[r.pos+1 : r.pos+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						r.fail(Invalid)
						return nil, false
					}
				}
				r.pos += 5
			default:
				r.fail(Invalid)
				return nil, false
			}
		case c < 0x20:
			r.fail(Invalid)
			return nil, false
		default:
			if c >= 0x80 {
				ascii = false
			}
			r.pos++
		}
	}
	r.fail(Invalid)
	return nil, false
}

// String reads a string value. A null leaves the result "" (as
// encoding/json leaves a string field unchanged); intern, when non-nil,
// may return a shared copy of a known value to save the allocation.
func (r *Reader) String(intern func([]byte) (string, bool)) string {
	if r.Status != OK {
		return ""
	}
	switch r.peek() {
	case 'n':
		r.literal("null")
		return ""
	case '"':
	default:
		r.fail(Fallback)
		return ""
	}
	raw, plain := r.rawString()
	if r.Status != OK {
		return ""
	}
	if !plain {
		return unquote(raw)
	}
	if intern != nil {
		if s, ok := intern(raw); ok {
			return s
		}
	}
	return string(raw)
}

// Int reads an integer value into *dst; null leaves it unchanged. Anything
// but a plain decimal integer that fits an int falls back.
func (r *Reader) Int(dst *int) {
	if r.Status != OK {
		return
	}
	c := r.peek()
	if c == 'n' {
		r.literal("null")
		return
	}
	if c != '-' && (c < '0' || c > '9') {
		r.fail(Fallback)
		return
	}
	start := r.pos
	r.number()
	if r.Status != OK {
		return
	}
	n, err := strconv.ParseInt(string(r.data[start:r.pos]), 10, strconv.IntSize)
	if err != nil {
		r.fail(Fallback) // a fraction, an exponent or an overflow
		return
	}
	*dst = int(n)
}

// number consumes a number, validating its grammar.
func (r *Reader) number() {
	d := r.data
	p := r.pos
	if p < len(d) && d[p] == '-' {
		p++
	}
	switch {
	case p < len(d) && d[p] == '0':
		p++
	case p < len(d) && '1' <= d[p] && d[p] <= '9':
		for p < len(d) && '0' <= d[p] && d[p] <= '9' {
			p++
		}
	default:
		r.fail(Invalid)
		return
	}
	if p < len(d) && d[p] == '.' {
		p++
		if p >= len(d) || d[p] < '0' || d[p] > '9' {
			r.fail(Invalid)
			return
		}
		for p < len(d) && '0' <= d[p] && d[p] <= '9' {
			p++
		}
	}
	if p < len(d) && (d[p] == 'e' || d[p] == 'E') {
		p++
		if p < len(d) && (d[p] == '+' || d[p] == '-') {
			p++
		}
		if p >= len(d) || d[p] < '0' || d[p] > '9' {
			r.fail(Invalid)
			return
		}
		for p < len(d) && '0' <= d[p] && d[p] <= '9' {
			p++
		}
	}
	r.pos = p
}

// Raw reads any value and returns its bytes (for json.RawMessage fields).
func (r *Reader) Raw() []byte {
	if r.Status != OK {
		return nil
	}
	r.ws()
	start := r.pos
	r.Skip()
	if r.Status != OK {
		return nil
	}
	return r.data[start:r.pos]
}

// Skip consumes and validates any value.
func (r *Reader) Skip() {
	if r.Status != OK {
		return
	}
	switch c := r.peek(); {
	case c == '{':
		if r.deeper() {
			r.Object(func([]byte) { r.Skip() })
			r.depth--
		}
	case c == '[':
		if r.deeper() {
			r.Array(r.Skip)
			r.depth--
		}
	case c == '"':
		r.rawString()
	case c == 't':
		r.literal("true")
	case c == 'f':
		r.literal("false")
	case c == 'n':
		r.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		r.number()
	default:
		r.fail(Invalid)
	}
}

func (r *Reader) deeper() bool {
	r.depth++
	if r.depth > maxDepth {
		r.fail(Fallback)
		return false
	}
	return true
}

// Other consumes the value of a key that matched none of names exactly:
// it falls back when the key equals one of them case-insensitively (which
// encoding/json would also match) or is not ASCII (which Unicode folding
// might match), and skips the value otherwise.
func (r *Reader) Other(key []byte, names ...string) {
	for _, c := range key {
		if c >= 0x80 {
			r.fail(Fallback)
			return
		}
	}
	for _, n := range names {
		if len(n) == len(key) && equalFoldASCII(key, n) {
			r.fail(Fallback)
			return
		}
	}
	r.Skip()
}

func equalFoldASCII(a []byte, b string) bool {
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Strings reads an object whose wanted members are all strings: the
// member names[i] into *dst[i]. A repeated wanted member falls back, as
// Mark does; any other member is consumed as Other consumes it.
func (r *Reader) Strings(names []string, dst ...*string) {
	var seen Seen
	r.Object(func(key []byte) {
		for i, n := range names {
			if string(key) == n {
				if r.Mark(&seen, i) {
					*dst[i] = r.String(nil)
				}
				return
			}
		}
		r.Other(key, names...)
	})
}

// Seen tracks which wanted keys an object had, to fall back on a repeat
// (encoding/json merges repeats in ways not worth copying).
type Seen uint64

// Mark records key number i and reports false (after falling back) when it
// was seen before.
func (r *Reader) Mark(s *Seen, i int) bool {
	if *s&(1<<i) != 0 {
		r.fail(Fallback)
		return false
	}
	*s |= 1 << i
	return true
}

// unquote decodes the body of a string already validated by rawString,
// exactly as encoding/json does (its unquoteBytes): escapes resolved, a
// valid surrogate pair joined, a lone surrogate and every byte of invalid
// UTF-8 replaced by U+FFFD.
func unquote(s []byte) string {
	b := make([]byte, 0, len(s)+utf8.UTFMax)
	for r := 0; r < len(s); {
		switch c := s[r]; {
		case c == '\\':
			r++
			switch s[r] {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := getu4(s[r+1:])
				r += 5
				if utf16.IsSurrogate(rr) {
					if r+1 < len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, getu4(s[r+2:])); dec != unicode.ReplacementChar {
							b = utf8.AppendRune(b, dec)
							r += 6
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
				continue
			default: // '"', '\\', '/'
				b = append(b, s[r])
			}
			r++
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b = utf8.AppendRune(b, rr)
		}
	}
	return string(b)
}

// getu4 decodes the four hex digits at the start of s (validated).
func getu4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
