package llm

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxProviderMessage caps a provider's own error message as reins run
// shows it to the user.
const MaxProviderMessage = 300

// ProviderMessage extracts the human message of a provider's error body
// (`{"error":{"message":...}}`, `{"error":"..."}`, `{"message":...}`, else
// the body's text) as one line: control characters escaped, cut at
// MaxProviderMessage bytes. It is for the user's terminal and the host log
// only: provider text never enters the model's context, a diagnostic or
// an event (docs/providers.md).
func ProviderMessage(body []byte) string {
	text := string(body)
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &v) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			text = inner.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			text = s
		case v.Message != "":
			text = v.Message
		}
	}
	return OneLine(text, MaxProviderMessage)
}

// OneLine makes s one printable line of at most max bytes: surrounding
// space trimmed, control characters (newlines included) and invalid UTF-8
// escaped as Go escapes, the cut marked with "…".
func OneLine(s string, max int) string {
	s = strings.TrimSpace(s)
	var b strings.Builder
	for i, r := range s {
		var piece string
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			piece = `\x` + strconv.FormatUint(uint64(s[i]), 16)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
			q := strconv.QuoteRune(r)
			piece = q[1 : len(q)-1]
		default:
			piece = string(r)
		}
		if b.Len()+len(piece) > max {
			b.WriteString("…")
			break
		}
		b.WriteString(piece)
	}
	return b.String()
}
