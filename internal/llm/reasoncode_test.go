package llm

import (
	"regexp"
	"strings"
	"testing"
)

// One rule for both wires (issue 28): on main the Anthropic adapter
// dropped punctuation ("weird!stop" → WEIRDSTOP) where the OpenAI one
// replaced it (WEIRD_STOP), and the OpenAI one turned "" into the empty,
// invalid code.
func TestReasonCode(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Z0-9_]{1,64}$`)
	for in, want := range map[string]Code{
		"content_filter":        "CONTENT_FILTER",
		"weird!stop":            "WEIRD_STOP",
		"end-of.turn now":       "END_OF_TURN_NOW",
		"":                      "UNKNOWN_STOP_REASON",
		"naïve":                 "NA_VE",
		"\x1b[31mred":           "__31MRED",
		strings.Repeat("a", 99): Code(strings.Repeat("A", 64)),
	} {
		got := ReasonCode(in)
		if got != want || !valid.MatchString(string(got)) {
			t.Errorf("ReasonCode(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzReasonCode(f *testing.F) {
	f.Add("stop")
	f.Add("\xff\xfe")
	valid := regexp.MustCompile(`^[A-Z0-9_]{1,64}$`)
	f.Fuzz(func(t *testing.T, s string) {
		if got := ReasonCode(s); !valid.MatchString(string(got)) {
			t.Fatalf("ReasonCode(%q) = %q", s, got)
		}
	})
}
