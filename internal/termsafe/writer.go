package termsafe

import (
	"io"
	"strings"
)

// JSONWriter passes encoding/json's output to W with JSON applied: the
// runes encoding/json leaves raw that a terminal would act on (C1
// controls, bidi overrides) become \u sequences, and the JSON means the
// same. json.Encoder writes each value in one Write, so no rune is split
// across calls. Every JSON reins prints (--json, --stream-json, batch
// results, `reins log --json`) goes through one, so child-written text is
// the same bytes whether it lands on a terminal or in a file.
type JSONWriter struct{ W io.Writer }

func (j JSONWriter) Write(p []byte) (int, error) {
	if _, err := j.W.Write(JSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Clip is s on one line (each run of white space one space), cut at n
// bytes on a rune boundary with "…" added: the preview of a listing or a
// rendered log. It does not escape; the caller escapes the line it builds.
func Clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}
