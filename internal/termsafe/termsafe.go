// Package termsafe makes text safe to print on a terminal. Model output,
// tool names, file names and session logs come from whoever controls the
// model or the repository; printed raw, an escape sequence can clear the
// screen, retitle the window, write the clipboard (OSC 52) or, with bidi
// overrides, make text read differently from what it is. Every renderer in
// reins passes what it did not write itself through this package.
package termsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Safe reports whether r may reach a terminal as is: a printable rune
// (unicode.IsPrint, so no C0 or C1 control, DEL, bidi control, line or
// paragraph separator or other format character), or the zero-width
// joiners emoji sequences are made of. Newline and tab are not Safe: only
// Escape keeps them, where the text is meant to span lines.
func Safe(r rune) bool {
	return unicode.IsPrint(r) || r == '\u200c' || r == '\u200d'
}

// Escape returns s with every rune that is not Safe written as a Go escape
// (\x1b, \u202e, \xff for a byte that is not UTF-8), keeping newlines and
// tabs: for text shown as a block, such as a model's answer. A backslash
// is left as is, so ordinary text reads unchanged; an escape therefore can
// be forged in the text, but it stays inert.
func Escape(s string) string { return escape(s, true) }

// EscapeLine is Escape for text shown on one line (a listing, a progress
// line, a table cell): newlines and tabs are escaped too, so one field
// cannot break the layout or fake another line.
func EscapeLine(s string) string { return escape(s, false) }

func escape(s string, keepLines bool) string {
	if clean(s, keepLines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'), Safe(r):
			b.WriteString(s[i : i+n])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += n
	}
	return b.String()
}

// clean reports whether s needs no escaping (the common case, kept cheap).
func clean(s string, keepLines bool) bool {
	for _, r := range s {
		if r == utf8.RuneError || !(Safe(r) || keepLines && (r == '\n' || r == '\t')) {
			return false
		}
	}
	return true
}

// JSON returns the output of encoding/json with every rune that is not
// Safe (outside the newlines JSON already escapes) written as a \u escape.
// encoding/json escapes C0 controls and U+2028/U+2029 but passes C1
// controls (U+009B is CSI on some terminals) and bidi overrides raw. Those
// runes can only occur inside JSON strings, where \uXXXX means the same, so
// the result decodes to exactly what enc wrote.
func JSON(enc []byte) []byte {
	if clean(string(enc), true) {
		return enc
	}
	out := make([]byte, 0, len(enc)+16)
	for i := 0; i < len(enc); {
		r, n := utf8.DecodeRune(enc[i:])
		if Safe(r) || r == '\n' || r == '\t' || r == utf8.RuneError && n == 1 {
			// encoding/json never writes invalid UTF-8; pass anything odd on.
			out = append(out, enc[i:i+n]...)
		} else if r > 0xFFFF {
			hi, lo := utf16Pair(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += n
	}
	return out
}

// utf16Pair splits r (above U+FFFF) into its UTF-16 surrogates, as JSON
// writes such a rune in \u form.
func utf16Pair(r rune) (hi, lo rune) {
	r -= 0x10000
	return 0xD800 + r>>10, 0xDC00 + r&0x3FF
}
