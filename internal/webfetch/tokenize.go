package webfetch

// This file is a small HTML tokenizer of reins's own, in place of
// golang.org/x/net/html's. That package's initialiser builds its
// 2,231-entry entity maps (and the atom table) in every reins process at
// start — `GODEBUG=inittrace=1 reins version` showed `init
// golang.org/x/net/html` at 0.7–0.9 ms and 113,144 bytes — although only
// this tool, which few sessions call, reads HTML (issue 27: write your
// own only where a measurement shows users would notice). Character
// references are decoded through the standard library's html package,
// which builds the same tables lazily, on first use.
//
// It follows the WHATWG tokenization rules the way x/net/html's
// Tokenizer does for what Text and prescan read (TestTokenizerMatchesXNet
// and FuzzTokenizerMatchesXNet compare the two): text, start, end and
// self-closing tags with lower-cased names and attributes (first of a
// name wins), comments, doctypes, bogus comments (<!…>, <?…>, </ …>;
// CDATA is one too, as outside foreign content), the raw-text elements
// (script with its escape states, style, xmp, iframe, noembed, noframes,
// noscript as with scripting on, plaintext) and the RCDATA ones (title,
// textarea). It works on a string the caller holds whole (webfetch
// bounds a body to MaxBody) and scans each byte a bounded number of
// times: no input makes it quadratic.

import (
	"html"
	"strings"
	"unicode/utf8"
)

// tokenType is the kind of the tokenizer's current token.
type tokenType uint8

const (
	eofToken tokenType = iota // the input is used up (or ends inside a tag)
	textToken
	startTagToken
	endTagToken
	selfClosingTagToken
	commentToken // <!--…-->, and the bogus comments <!…>, <?…>, </ …>, </>
	doctypeToken
)

// span is a range of the input, start inclusive, end exclusive.
type span struct{ start, end int }

// attribute is a tag's attribute: the name lower-cased, the value with
// its character references decoded.
type attribute struct{ key, val string }

// tokenizer reads HTML a token at a time; next moves to the next token
// and the other methods read the current one.
type tokenizer struct {
	s   string
	pos int // where the next token starts
	eof bool
	// rawTag is the lower-cased name of the raw-text or RCDATA element
	// just opened: the next token is its text up to the matching end tag.
	rawTag string

	tt   tokenType
	data span // a text's, comment's or doctype's text; a tag's name
	// attrs is the part of a tag after its name, up to its '>'.
	attrs span
	// rawText: the text's character references are not decoded (script,
	// style, …); convertNUL: its NUL bytes become U+FFFD (raw text and
	// RCDATA).
	rawText, convertNUL bool
}

func newTokenizer(s string) *tokenizer { return &tokenizer{s: s} }

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' }

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// next reads the next token and returns its type.
func (z *tokenizer) next() tokenType {
	z.tt = z.read()
	if z.tt == eofToken {
		z.eof = true
	}
	return z.tt
}

func (z *tokenizer) read() tokenType {
	if z.eof {
		return eofToken
	}
	s := z.s
	start := z.pos
	z.data = span{start, start}
	if z.rawTag != "" {
		tag := z.rawTag
		z.rawTag = ""
		var end int
		switch tag {
		case "plaintext":
			end = len(s)
		case "script":
			end = scriptEnd(s, start)
		default:
			end = rawEnd(s, start, tag)
		}
		if end > start {
			z.pos = end
			z.data.end = end
			z.rawText = tag != "textarea" && tag != "title"
			z.convertNUL = true
			return textToken
		}
	}
	z.rawText, z.convertNUL = false, false

	i := start
	for {
		lt := strings.IndexByte(s[i:], '<')
		if lt < 0 || i+lt+1 >= len(s) {
			break // no tag starts: the rest is text (a last '<' too)
		}
		i += lt + 1 // after the '<'
		c := s[i]
		if !isLetter(c) && c != '/' && c != '!' && c != '?' {
			continue // a '<' that starts nothing is text
		}
		if i-1 > start { // the text before the tag first
			z.pos = i - 1
			z.data.end = i - 1
			return textToken
		}
		i++ // after the '<' and c
		switch {
		case isLetter(c):
			return z.readTag(i, true)
		case c == '/':
			if i >= len(s) {
				z.pos = len(s)
				z.data.end = len(s) // "</" at the end is text
				return textToken
			}
			if s[i] == '>' { // "</" ">" is no token: an empty comment
				z.pos = i + 1
				z.data = span{i + 1, i + 1}
				return commentToken
			}
			if isLetter(s[i]) {
				return z.readTag(i+1, false)
			}
			return z.untilCloseAngle(i, commentToken)
		case c == '?':
			return z.untilCloseAngle(i-1, commentToken)
		default:
			return z.markupDeclaration(i)
		}
	}
	if start < len(s) {
		z.pos = len(s)
		z.data.end = len(s)
		return textToken
	}
	return eofToken
}

// untilCloseAngle makes the token at i, up to the next '>' (or the end),
// a comment or doctype.
func (z *tokenizer) untilCloseAngle(i int, tt tokenType) tokenType {
	gt := strings.IndexByte(z.s[i:], '>')
	if gt < 0 {
		z.data = span{i, len(z.s)}
		z.pos = len(z.s)
		return tt
	}
	z.data = span{i, i + gt}
	z.pos = i + gt + 1
	return tt
}

// markupDeclaration reads what follows "<!" at i: a comment, a doctype
// or a bogus comment (CDATA included).
func (z *tokenizer) markupDeclaration(i int) tokenType {
	s := z.s
	if len(s)-i < 2 { // the input ends within two bytes: a bogus comment
		end := len(s)
		if len(s)-i == 1 && s[i] == '>' {
			end--
		}
		z.data = span{i, end}
		z.pos = len(s)
		return commentToken
	}
	if s[i] == '-' && s[i+1] == '-' {
		z.comment(i + 2)
		return commentToken
	}
	if dt := "doctype"; len(s)-i >= len(dt) && strings.EqualFold(asciiOnly(s[i:i+len(dt)]), dt) {
		j := skipSpace(s, i+len(dt))
		return z.untilCloseAngle(j, doctypeToken)
	}
	return z.untilCloseAngle(i, commentToken)
}

// asciiOnly returns s if it is ASCII, else "" (so that EqualFold does
// not fold the Kelvin sign and long s into letters).
func asciiOnly(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return ""
		}
	}
	return s
}

// comment reads a comment's text from i (after "<!--") up to "-->",
// "--!>", a '>' after nothing but dashes, or the end of the input.
func (z *tokenizer) comment(i int) {
	s := z.s
	start := i
	dashes := 0
	beginning := true
	for i < len(s) {
		c := s[i]
		i++
		switch c {
		case '-':
			dashes++
			continue
		case '>':
			if dashes >= 2 || beginning {
				z.pos = i
				z.data = span{start, max(start, i-len("-->"))}
				return
			}
		case '!':
			if dashes >= 2 {
				if i >= len(s) {
					z.pos = len(s)
					z.data = span{start, max(start, len(s)-len("--!"))}
					return
				}
				c = s[i]
				i++
				if c == '>' {
					z.pos = i
					z.data = span{start, max(start, i-len("--!>"))}
					return
				}
				if c == '-' {
					dashes = 1
					beginning = false
					continue
				}
			}
		}
		dashes = 0
		beginning = false
	}
	// The input ends inside the comment: its text is all but a trailing
	// "--!", "--" or "-".
	end := len(s)
	switch t := s[start:]; {
	case strings.HasSuffix(t, "--!"):
		end -= 3
	case strings.HasSuffix(t, "--"):
		end -= 2
	case strings.HasSuffix(t, "-"):
		end--
	}
	z.pos = len(s)
	z.data = span{start, end}
}

// readTag reads a tag whose name's first letter ends before i, up to
// its '>'. A tag the input ends inside is no token: the end.
func (z *tokenizer) readTag(i int, start bool) tokenType {
	s := z.s
	z.data.start = i - 1
	for ; ; i++ {
		if i >= len(s) {
			return eofToken
		}
		if c := s[i]; isSpace(c) || c == '/' || c == '>' {
			break
		}
	}
	z.data.end = i
	if isSpace(s[i]) {
		i++
	}
	z.attrs.start = i
	var lastKey, lastVal span // the last attribute with a name
	for {
		if i = skipSpace(s, i); i >= len(s) {
			return eofToken
		}
		if s[i] == '>' {
			break
		}
		key, val, j, ok := scanAttr(s, i)
		if !ok {
			return eofToken
		}
		if key.end > key.start {
			lastKey, lastVal = key, val
		}
		i = j
	}
	z.attrs.end = i
	z.pos = i + 1
	if !start {
		return endTagToken
	}
	// Raw text or RCDATA follows these elements (x/net/html sets it for
	// a self-closing one too).
	switch name := lowerASCII(s[z.data.start:z.data.end]); name {
	case "iframe", "noembed", "noframes", "noscript", "plaintext", "script", "style", "textarea", "title", "xmp":
		z.rawTag = name
	}
	// "<br/>" closes itself; "<a href=x/>" does not: the '/' is the
	// value's — unless that attribute was a repeated name, which is
	// dropped.
	if s[i-1] == '/' && (lastVal.end != i || z.repeated(lastKey)) {
		return selfClosingTagToken
	}
	return startTagToken
}

// repeated reports whether the attribute named key repeats an earlier
// attribute's name in the current tag.
func (z *tokenizer) repeated(key span) bool {
	name := lowerASCII(key.String(z.s))
	dup := false
	z.eachAttr(func(k, _ span) bool {
		if k == key {
			return false
		}
		dup = lowerASCII(k.String(z.s)) == name
		return !dup
	})
	return dup
}

// scanAttr reads an attribute at i (not white space, not '>'): its name,
// its value, and where the tag goes on. ok is false when the input ends
// first.
func scanAttr(s string, i int) (key, val span, next int, ok bool) {
	key.start = i
	for ; ; i++ {
		if i >= len(s) {
			return key, val, i, false
		}
		c := s[i]
		if c == '=' && i == key.start {
			continue // a name may start with '='
		}
		if c == '=' || isSpace(c) || c == '/' || c == '>' {
			break
		}
	}
	key.end = i
	val = span{i, i}
	if i = skipSpace(s, i); i >= len(s) {
		return key, val, i, false
	}
	switch s[i] {
	case '/':
		return key, val, i + 1, true
	case '=':
	default:
		return key, val, i, true
	}
	if i = skipSpace(s, i+1); i >= len(s) {
		return key, val, i, false
	}
	switch q := s[i]; q {
	case '>':
		return key, val, i, true
	case '"', '\'':
		end := strings.IndexByte(s[i+1:], q)
		if end < 0 {
			return key, val, len(s), false
		}
		return key, span{i + 1, i + 1 + end}, i + 1 + end + 1, true
	}
	for j := i; j < len(s); j++ {
		switch c := s[j]; {
		case isSpace(c):
			return key, span{i, j}, j + 1, true
		case c == '>':
			return key, span{i, j}, j, true
		}
	}
	return key, val, len(s), false
}

// eachAttr calls f with the name and value of each of the current tag's
// attributes (repeats and nameless ones included) until f returns false.
func (z *tokenizer) eachAttr(f func(key, val span) bool) {
	s := z.s[:z.attrs.end+1] // the tag's '>' ends it
	for i := skipSpace(s, z.attrs.start); i < z.attrs.end; i = skipSpace(s, i) {
		key, val, j, _ := scanAttr(s, i)
		if !f(key, val) {
			return
		}
		i = j
	}
}

// tagName is the current tag's name, lower-cased.
func (z *tokenizer) tagName() string {
	return lowerASCII(nulToFFFD(z.s[z.data.start:z.data.end]))
}

// attr returns the value of the current start tag's attribute key
// (lower-case): the first of that name.
func (z *tokenizer) attr(key string) (string, bool) {
	if z.tt != startTagToken && z.tt != selfClosingTagToken {
		return "", false
	}
	var val span
	found := false
	z.eachAttr(func(k, v span) bool {
		if k.end > k.start && lowerASCII(z.s[k.start:k.end]) == key {
			val, found = v, true
			return false
		}
		return true
	})
	if !found {
		return "", false
	}
	return z.attrValue(val), true
}

// tagAttrs returns the current start tag's attributes in order, the
// first of each name only.
func (z *tokenizer) tagAttrs() []attribute {
	if z.tt != startTagToken && z.tt != selfClosingTagToken {
		return nil
	}
	var (
		out  []attribute
		seen map[string]bool // once there are many
	)
	z.eachAttr(func(k, v span) bool {
		if k.end == k.start {
			return true
		}
		key := lowerASCII(z.s[k.start:k.end])
		if seen == nil && len(out) >= 8 {
			seen = make(map[string]bool)
			for _, a := range out {
				seen[a.key] = true
			}
		}
		if seen != nil {
			if seen[key] {
				return true
			}
			seen[key] = true
		} else {
			for _, a := range out {
				if a.key == key {
					return true
				}
			}
		}
		out = append(out, attribute{key, v.String(z.s)})
		return true
	})
	for i := range out {
		out[i].key = nulToFFFD(out[i].key)
		out[i].val = unescape(convertNewlines(nulToFFFD(out[i].val)), true)
	}
	return out
}

func (sp span) String(s string) string { return s[sp.start:sp.end] }

func (z *tokenizer) attrValue(v span) string {
	return unescape(convertNewlines(nulToFFFD(v.String(z.s))), true)
}

// text is the current text's, comment's or doctype's text: newlines
// normalised, character references decoded (but in raw text).
func (z *tokenizer) text() string {
	switch z.tt {
	case textToken, commentToken, doctypeToken:
	default:
		return ""
	}
	t := convertNewlines(z.data.String(z.s))
	if z.convertNUL || z.tt == commentToken {
		t = nulToFFFD(t)
	}
	if z.tt != textToken || !z.rawText {
		t = unescape(t, false)
	}
	return t
}

// rawEnd returns where the raw text or RCDATA from i ends: at the "</"
// of the end tag named tag (any case, followed by white space, '/' or
// '>'), or the end of the input.
func rawEnd(s string, i int, tag string) int {
	for {
		lt := strings.Index(s[i:], "</")
		if lt < 0 {
			return len(s)
		}
		i += lt
		if endTagAt(s, i+2, tag) {
			return i
		}
		i += 2
	}
}

// endTagAt reports whether s at i (after a "</") holds tag's name, any
// case, and then white space, '/' or '>'.
func endTagAt(s string, i int, tag string) bool {
	if len(s)-i <= len(tag) {
		return false
	}
	for k := 0; k < len(tag); k++ {
		if c := s[i+k]; c != tag[k] && c != tag[k]-('a'-'A') {
			return false
		}
	}
	c := s[i+len(tag)]
	return isSpace(c) || c == '/' || c == '>'
}

// scriptEnd returns where a script's text from i ends, following the
// script data states: "<!--" escapes it, and within that a "<script"
// escapes it twice, so that a "</script>" there does not end it.
func scriptEnd(s string, i int) int {
	type state uint8
	const (
		data state = iota
		lessThan
		escapeStart
		escapeStartDash
		escaped
		escapedDash
		escapedDashDash
		escapedLessThan
		doubleEscaped
		doubleEscapedDash
		doubleEscapedDashDash
		doubleEscapedLessThan
	)
	st := data
	for i < len(s) {
		c := s[i]
		i++
		switch st {
		case data:
			if c == '<' {
				st = lessThan
			}
		case lessThan:
			switch c {
			case '/':
				if endTagAt(s, i, "script") {
					return i - 2
				}
				st = data
			case '!':
				st = escapeStart
			default:
				i--
				st = data
			}
		case escapeStart, escapeStartDash:
			if c != '-' {
				i--
				st = data
			} else if st == escapeStart {
				st = escapeStartDash
			} else {
				st = escapedDashDash
			}
		case escaped, escapedDash, escapedDashDash:
			switch {
			case c == '-' && st == escaped:
				st = escapedDash
			case c == '-':
				st = escapedDashDash
			case c == '<':
				st = escapedLessThan
			case c == '>' && st == escapedDashDash:
				st = data
			default:
				st = escaped
			}
		case escapedLessThan:
			switch {
			case c == '/':
				if endTagAt(s, i, "script") {
					return i - 2
				}
				st = escaped
			case isLetter(c):
				// "<script" and a delimiter escapes twice.
				if endTagAt(s, i-1, "script") {
					i += len("script")
					st = doubleEscaped
				} else {
					st = escaped
				}
			default:
				// x/net/html goes back to script data here (the
				// WHATWG rules stay escaped); as it does.
				i--
				st = data
			}
		case doubleEscaped, doubleEscapedDash, doubleEscapedDashDash:
			switch {
			case c == '-' && st == doubleEscaped:
				st = doubleEscapedDash
			case c == '-':
				st = doubleEscapedDashDash
			case c == '<':
				st = doubleEscapedLessThan
			case c == '>' && st == doubleEscapedDashDash:
				st = data
			default:
				st = doubleEscaped
			}
		case doubleEscapedLessThan:
			if c == '/' {
				if endTagAt(s, i, "script") {
					i += len("script") + 1
					st = escaped
				} else {
					st = doubleEscaped
				}
			} else {
				i--
				st = doubleEscaped
			}
		}
	}
	return len(s)
}

// unescape decodes the character references in s as x/net/html does:
// numeric ones here, named ones through the standard library's table.
// In an attribute value (attribute) a named reference must be whole
// (no "&notit" as "¬it"), and one without its ';' followed by '=' is
// left as it is ("?a=1&copy=2" stays).
func unescape(s string, attribute bool) string {
	i := strings.IndexByte(s, '&')
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i >= 0 {
		b.WriteString(s[:i])
		s = s[i:]
		var n int
		if len(s) > 1 && s[1] == '#' {
			var r rune
			if r, n = numericRef(s); n > 0 {
				b.WriteRune(r)
			}
		} else {
			var t string
			if t, n = namedRef(s, attribute); n > 0 {
				b.WriteString(t)
			}
		}
		if n == 0 {
			b.WriteByte('&')
			n = 1
		}
		s = s[n:]
		i = strings.IndexByte(s, '&')
	}
	b.WriteString(s)
	return b.String()
}

// windows1252 is what the numeric references &#x80; to &#x9F; mean, as
// browsers read them.
var windows1252 = [32]rune{
	'\u20AC', '\u0081', '\u201A', '\u0192', '\u201E', '\u2026', '\u2020', '\u2021',
	'\u02C6', '\u2030', '\u0160', '\u2039', '\u0152', '\u008D', '\u017D', '\u008F',
	'\u0090', '\u2018', '\u2019', '\u201C', '\u201D', '\u2022', '\u2013', '\u2014',
	'\u02DC', '\u2122', '\u0161', '\u203A', '\u0153', '\u009D', '\u017E', '\u0178',
}

// numericRef decodes the reference "&#…" at the start of s and returns
// its length, or 0 when there are no digits.
func numericRef(s string) (rune, int) {
	if len(s) <= 2 {
		return 0, 0
	}
	i := 2
	base := rune(10)
	if s[i] == 'x' || s[i] == 'X' {
		base = 16
		i++
	}
	i0 := i
	var x rune
digits:
	for ; i < len(s); i++ {
		c := s[i]
		var d rune
		switch {
		case '0' <= c && c <= '9':
			d = rune(c - '0')
		case base == 16 && 'a' <= c && c <= 'f':
			d = rune(c-'a') + 10
		case base == 16 && 'A' <= c && c <= 'F':
			d = rune(c-'A') + 10
		default:
			break digits
		}
		if x <= utf8.MaxRune { // past it, it stays invalid and cannot overflow
			x = base*x + d
		}
	}
	if i == i0 {
		return 0, 0
	}
	if i < len(s) && s[i] == ';' {
		i++
	}
	switch {
	case 0x80 <= x && x <= 0x9F:
		x = windows1252[x-0x80]
	case x == 0 || 0xD800 <= x && x <= 0xDFFF || x > utf8.MaxRune:
		x = utf8.RuneError
	}
	return x, i
}

// namedRef decodes the named reference at the start of s ("&amp;") and
// returns its text and length, or 0 when it is none.
func namedRef(s string, attribute bool) (string, int) {
	i := 1
	for i < len(s) && (isLetter(s[i]) || '0' <= s[i] && s[i] <= '9') {
		i++
	}
	if i == 1 {
		return "", 0
	}
	semi := i < len(s) && s[i] == ';'
	if semi {
		i++
	}
	ref := s[:i]
	if attribute && !semi && i < len(s) && s[i] == '=' {
		return ref, i
	}
	// The standard library decodes as x/net/html does in text: the
	// longest name, else the longest legacy name without ';' that starts
	// it ("&notit" is "¬it").
	t := html.UnescapeString(ref)
	if !attribute || whole(ref, t, semi) {
		return t, i
	}
	return ref, i
}

// whole reports whether t, the standard library's decoding of the
// reference ref, decoded all of it rather than a legacy name starting
// it. A part decoded leaves the rest as written, so t ends as ref does
// — ';', or a letter or digit — whereas a whole reference is decoded to
// characters that are neither: none is ';' but &semi;'s, and the legacy
// names (the only ones without ';') all mean Latin-1 or &<>" characters.
func whole(ref, t string, semi bool) bool {
	if semi {
		return ref == "&semi;" || !strings.HasSuffix(t, ";")
	}
	return t[len(t)-1] != ref[len(ref)-1]
}

// convertNewlines turns "\r\n" and a lone "\r" into "\n".
func convertNewlines(s string) string {
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// nulToFFFD replaces NUL bytes with U+FFFD.
func nulToFFFD(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// lowerASCII lower-cases A–Z only.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
