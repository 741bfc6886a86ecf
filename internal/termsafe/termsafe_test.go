package termsafe

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	tests := []struct{ in, text, line string }{
		{"plain text, é ü 日本", "plain text, é ü 日本", "plain text, é ü 日本"},
		{"a\nb\tc", "a\nb\tc", `a\nb\tc`},
		{"osc52 \x1b]52;c;ZXZpbA==\x07 end", `osc52 \x1b]52;c;ZXZpbA==\x07 end`, `osc52 \x1b]52;c;ZXZpbA==\x07 end`},
		{"clear\x1b[2J", `clear\x1b[2J`, `clear\x1b[2J`},
		{"cr\rover", `cr\rover`, `cr\rover`},
		{"nul\x00 del\x7f", `nul\x00 del\x7f`, `nul\x00 del\x7f`},
		{"c1 \u009b2J csi", `c1 \u009b2J csi`, `c1 \u009b2J csi`},
		{"raw c1 byte \x9b2J", `raw c1 byte \x9b2J`, `raw c1 byte \x9b2J`},
		{"bidi \u202egnp.exe\u202c", `bidi \u202egnp.exe\u202c`, `bidi \u202egnp.exe\u202c`},
		{"isolate \u2066x\u2069 lrm\u200e", `isolate \u2066x\u2069 lrm\u200e`, `isolate \u2066x\u2069 lrm\u200e`},
		{"sep\u2028x\u2029", `sep\u2028x\u2029`, `sep\u2028x\u2029`},
		{"emoji 👩\u200d💻", "emoji 👩\u200d💻", "emoji 👩\u200d💻"},
		{`back\slash`, `back\slash`, `back\slash`},
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.text {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.text)
		}
		if got := EscapeLine(tt.in); got != tt.line {
			t.Errorf("EscapeLine(%q) = %q, want %q", tt.in, got, tt.line)
		}
	}
}

// FuzzEscape: whatever goes in, no control character, bidi override or
// invalid UTF-8 comes out (only \n and \t, from Escape).
func FuzzEscape(f *testing.F) {
	f.Add("\x1b]52;c;x\x07\u202e\x9b")
	f.Fuzz(func(t *testing.T, s string) {
		check := func(out string, lines bool) {
			if !utf8.ValidString(out) {
				t.Fatalf("invalid UTF-8 out of %q: %q", s, out)
			}
			for _, r := range out {
				if !Safe(r) && !(lines && (r == '\n' || r == '\t')) {
					t.Fatalf("unsafe rune %U in %q", r, out)
				}
			}
		}
		check(Escape(s), true)
		check(EscapeLine(s), false)
	})
}

func TestJSON(t *testing.T) {
	in := []byte(`{"a":"x` + "\u009b\u202e\U000e0041" + `é"}` + "\n")
	got := string(JSON(in))
	want := `{"a":"x\u009b\u202e\udb40\udc41é"}` + "\n"
	if got != want {
		t.Errorf("JSON = %q, want %q", got, want)
	}
	var a, b map[string]string
	if err := json.Unmarshal(in, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(got), &b); err != nil || a["a"] != b["a"] {
		t.Errorf("decodes to %q (%v), want %q", b["a"], err, a["a"])
	}
}
