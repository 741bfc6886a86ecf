package linediff

import (
	"fmt"
	"strings"
	"testing"
)

func showDiff(d []Line) string {
	var b strings.Builder
	for _, l := range d {
		if l.Kind == Gap {
			fmt.Fprintf(&b, "~%d\n", l.N)
			continue
		}
		b.WriteString(string(rune(l.Kind)) + l.Text + "\n")
	}
	return b.String()
}

// TestLineDiff: removed lines come with the added ones, the unchanged
// runs fold to a gap, and a diff too big for the table still names every
// removed and added line.
func TestLineDiff(t *testing.T) {
	for _, tc := range []struct{ before, after, want string }{
		{"", "a\nb\n", "+a\n+b\n"},
		{"a\nb\n", "", "-a\n-b\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\nX\n6\n7\n8\n", "~2\n 3\n 4\n-5\n+X\n 6\n 7\n~1\n"},
		{"a\nb\nc\n", "a\nc\nd\n", " a\n-b\n c\n+d\n"},
		{"x\ny\n", "y\nx\n", "-x\n y\n+x\n"},
	} {
		if got := showDiff(Lines(tc.before, tc.after, 2)); got != tc.want {
			t.Errorf("Lines(%q, %q):\n%s\nwant:\n%s", tc.before, tc.after, got, tc.want)
		}
	}
	var a, b strings.Builder
	for i := range 1500 {
		fmt.Fprintf(&a, "a%d\n", i)
		fmt.Fprintf(&b, "b%d\n", i)
	}
	d := Lines(a.String(), b.String(), 2)
	if got := strings.Count(showDiff(d), "\n-"); got != 1499 { // the first has no newline before it
		t.Errorf("%d removed lines", got+1)
	}
}
