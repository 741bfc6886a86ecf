package frontmatter

import "testing"

func TestHint(t *testing.T) {
	for _, tt := range []struct{ front, want string }{
		{"name: pdf\ndescription: Work with PDFs: extract text\n", ` (line 3: a value holding ": " needs quotes)`},
		{"name: pdf\ndescription: \"Work with PDFs: extract text\"\n", ""},
		{"name: pdf\ndescription: plain words\n", ""},
		{"description: >\n  folded: text\n", ""},
		{"metadata:\n  a: b\n", ""},
		{"description: ends with a colon:\n", ` (line 2: a value holding ": " needs quotes)`},
	} {
		if got := Hint([]byte(tt.front)); got != tt.want {
			t.Errorf("Hint(%q) = %q, want %q", tt.front, got, tt.want)
		}
	}
}
