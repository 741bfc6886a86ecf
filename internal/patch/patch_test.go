package patch

import (
	"errors"
	"strings"
	"testing"
)

func TestParseHeredocAndBlankLines(t *testing.T) {
	ops, err := Parse("\n<<'EOF'\n*** Begin Patch\n*** Add File: a.txt\n+x\n\n*** Delete File: b.txt\n*** End Patch\nEOF\n\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 2 || ops[0].Kind != Add || ops[0].Content != "x\n" || ops[1].Kind != Delete || ops[1].Path != "b.txt" {
		t.Fatalf("ops = %+v", ops)
	}
}

func TestParseErrorLine(t *testing.T) {
	_, err := Parse("*** Begin Patch\n*** Update File: a\n-x\n?y\n*** End Patch")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 4 {
		t.Fatalf("err = %v, want a ParseError at line 4", err)
	}
}

func TestApplyChunks(t *testing.T) {
	tests := []struct {
		name, text string
		chunks     []Chunk
		want       string
		err        bool
	}{
		{"replace", "a\nb\nc\n", []Chunk{{Old: []string{"b"}, New: []string{"B"}, Ctx: []int{-1}}}, "a\nB\nc\n", false},
		{"two chunks in order", "a\nb\nc\nb\n", []Chunk{{Old: []string{"b"}, New: []string{"1"}, Ctx: []int{-1}}, {Old: []string{"b"}, New: []string{"2"}, Ctx: []int{-1}}}, "a\n1\nc\n2\n", false},
		{"anchor picks the second", "f\nx\ng\nx\n", []Chunk{{Anchor: "g", Old: []string{"x"}, New: []string{"y"}, Ctx: []int{-1}}}, "f\nx\ng\ny\n", false},
		{"eof picks the last", "x\nx\n", []Chunk{{Old: []string{"x"}, New: []string{"z"}, Ctx: []int{-1}, EOF: true}}, "x\nz\n", false},
		{"pure addition at the end", "a\n", []Chunk{{New: []string{"b"}, Ctx: []int{-1}}}, "a\nb\n", false},
		{"no final newline kept", "a\nb", []Chunk{{Old: []string{"b"}, New: []string{"c"}, Ctx: []int{-1}}}, "a\nc", false},
		{"missing", "a\n", []Chunk{{Old: []string{"q"}, New: []string{"r"}, Ctx: []int{-1}}}, "", true},
	}
	for _, tt := range tests {
		got, err := Apply(tt.text, tt.chunks)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("%s: Apply = %q, %v; want %q (error %v)", tt.name, got, err, tt.want, tt.err)
		}
		if err != nil && !errors.Is(err, ErrNoMatch) {
			t.Errorf("%s: error %v does not wrap ErrNoMatch", tt.name, err)
		}
	}
	if _, err := Apply(strings.Repeat("a\n", 3), []Chunk{{Old: []string{"a", "a"}, New: nil}, {Old: []string{"a", "a"}, New: nil}}); err == nil {
		t.Error("two chunks over the same lines applied")
	}
}
