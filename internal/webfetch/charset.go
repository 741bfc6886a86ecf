package webfetch

import (
	"bytes"
	"mime"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

//go:generate go run gencharset.go

// charset is a WHATWG encoding (https://encoding.spec.whatwg.org/), by
// its canonical name; charset_tables.go lists them with their labels.
//
// webfetch decodes UTF-8, UTF-16 and the single-byte encodings itself
// from tables generated out of golang.org/x/text, rather than linking
// x/net/html/charset: that package brings x/text's language and CJK
// tables, whose package initialisers ran in every reins process, for a
// tool few sessions call. The multi-byte legacy encodings (Shift_JIS,
// EUC-JP, ISO-2022-JP, GBK, gb18030, Big5, EUC-KR) are not decoded: such
// a page is shown as UTF-8 with invalid bytes replaced, and the result
// says so.
type charset string

// prescanLen is how much of a page is searched for a <meta> charset, as
// browsers do.
const prescanLen = 1024

// sniff picks a body's encoding the way browsers do: a byte-order mark,
// then the Content-Type header's charset, then (html only) a <meta>
// charset in the first 1024 bytes. A label none of them names, or none
// at all, gives "". bomLen is the length of the mark to skip.
func sniff(body []byte, contentType string, isHTML bool) (cs charset, bomLen int) {
	switch {
	case bytes.HasPrefix(body, []byte{0xEF, 0xBB, 0xBF}):
		return csUTF_8, 3
	case bytes.HasPrefix(body, []byte{0xFE, 0xFF}):
		return csUTF_16BE, 2
	case bytes.HasPrefix(body, []byte{0xFF, 0xFE}):
		return csUTF_16LE, 2
	}
	if _, params, err := mime.ParseMediaType(contentType); err == nil {
		if cs := label(params["charset"]); cs != "" {
			return cs, 0
		}
	}
	if isHTML {
		return prescan(body), 0
	}
	return "", 0
}

// label looks a charset label up as the WHATWG list does: trimmed of
// white space, case-insensitive.
func label(s string) charset {
	return lookupLabel(strings.ToLower(strings.Trim(s, " \t\n\f\r")))
}

// toUTF8 returns body, in the encoding cs (after bomLen bytes of
// byte-order mark), as UTF-8. An undeclared encoding is UTF-8 when the
// whole body is valid UTF-8 (a character cut by the size bound
// allowed), else windows-1252 — the browsers' fallback. note, when not
// empty, is a line for the model: the body is in an encoding webfetch
// does not decode, shown as UTF-8.
func toUTF8(body []byte, cs charset, bomLen int) (text string, note string) {
	body = body[bomLen:]
	if cs == "" {
		if validUTF8Prefix(body) {
			cs = csUTF_8
		} else {
			cs = csWINDOWS_1252
		}
	}
	switch cs {
	case csUTF_8:
		return strings.ToValidUTF8(string(body), "\uFFFD"), ""
	case csUTF_16BE, csUTF_16LE:
		return decodeUTF16(body, cs == csUTF_16BE), ""
	}
	if t := singleByte(cs); t != nil {
		return decodeSingleByte(body, t), ""
	}
	return strings.ToValidUTF8(string(body), "\uFFFD"),
		"[the page is in " + string(cs) + ", which webfetch does not decode: shown as UTF-8, invalid bytes replaced by U+FFFD]"
}

// validUTF8Prefix reports whether b is UTF-8 but for a character cut at
// its end.
func validUTF8Prefix(b []byte) bool {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				b = b[:i]
			}
			break
		}
	}
	return utf8.Valid(b)
}

func decodeSingleByte(b []byte, t *[128]uint16) string {
	var s strings.Builder
	s.Grow(len(b))
	for _, c := range b {
		if c < 0x80 {
			s.WriteByte(c)
		} else {
			s.WriteRune(rune(t[c-0x80]))
		}
	}
	return s.String()
}

func decodeUTF16(b []byte, bigEndian bool) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		if bigEndian {
			u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		} else {
			u[i] = uint16(b[2*i+1])<<8 | uint16(b[2*i])
		}
	}
	s := string(utf16.Decode(u)) // unpaired surrogates become U+FFFD
	if len(b)%2 == 1 {
		s += "\uFFFD"
	}
	return s
}

// prescan finds the charset a <meta charset> or <meta http-equiv=
// "content-type" content="…charset=…"> in the first 1024 bytes names
// (the WHATWG prescan, on the tokenizer of tokenize.go). A UTF-16 label there
// means UTF-8 (a page whose <meta> could be read as ASCII is not
// UTF-16), x-user-defined means windows-1252.
func prescan(body []byte) charset {
	if len(body) > prescanLen {
		body = body[:prescanLen]
	}
	z := newTokenizer(string(body))
	for {
		switch z.next() {
		case eofToken:
			return ""
		case startTagToken, selfClosingTagToken:
			if z.tagName() != "meta" {
				continue
			}
			var (
				cs             charset
				pragma, needIt bool
			)
			for _, a := range z.tagAttrs() { // the first of a name only
				switch a.key {
				case "http-equiv":
					pragma = strings.EqualFold(a.val, "content-type")
				case "content":
					if cs == "" {
						if cs = label(fromContent(a.val)); cs != "" {
							needIt = true
						}
					}
				case "charset":
					cs, needIt = label(a.val), false
				}
			}
			if cs == "" || needIt && !pragma {
				continue
			}
			switch cs {
			case csUTF_16BE, csUTF_16LE:
				return csUTF_8
			case csX_USER_DEFINED:
				return csWINDOWS_1252
			}
			return cs
		}
	}
}

// fromContent extracts the charset of a <meta content> value
// ("text/html; charset=…"), as the WHATWG algorithm does. "charset" is
// matched ASCII case-insensitively: strings.ToLower would turn a byte
// that is not UTF-8 (a Latin-1 page's "é") into U+FFFD's three bytes and
// shift the index past it.
func fromContent(s string) string {
	for {
		i := strings.Index(lowerASCII(s), "charset")
		if i < 0 {
			return ""
		}
		s = strings.TrimLeft(s[i+len("charset"):], " \t\n\f\r")
		if !strings.HasPrefix(s, "=") {
			continue
		}
		s = strings.TrimLeft(s[1:], " \t\n\f\r")
		if s == "" {
			return ""
		}
		if q := s[0]; q == '"' || q == '\'' {
			end := strings.IndexByte(s[1:], q)
			if end < 0 {
				return ""
			}
			return s[1 : 1+end]
		}
		if end := strings.IndexAny(s, "; \t\n\f\r"); end >= 0 {
			return s[:end]
		}
		return s
	}
}
