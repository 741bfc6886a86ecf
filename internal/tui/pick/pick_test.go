package pick

import (
	"slices"
	"testing"
)

// TestRank: the key beats the text beats letters in order, case aside.
func TestRank(t *testing.T) {
	for _, tc := range []struct {
		q, key, text string
		want         int
	}{
		{"Ab", "xaBy", "", 3},
		{"fix", "20261202-ab12", "Fix the build", 2},
		{"fxb", "id", "fix the build", 1},
		{"zz", "id", "fix", 0},
	} {
		if got := Rank(tc.q, tc.key, tc.text); got != tc.want {
			t.Errorf("Rank(%q, %q, %q) = %d, want %d", tc.q, tc.key, tc.text, got, tc.want)
		}
	}
}

// TestBest: only the best rank's items, in order; every item for an
// empty query; none when nothing matches.
func TestBest(t *testing.T) {
	items := []string{"main.go", "cmd/reins/main.go", "README.md", "internal/tui/model.go"}
	id := func(s string) string { return s }
	if got := Best("main", items, id, id); !slices.Equal(got, []string{"main.go", "cmd/reins/main.go"}) {
		t.Errorf("main: %q", got)
	}
	if got := Best("mdl", items, id, id); !slices.Equal(got, []string{"internal/tui/model.go"}) {
		t.Errorf("mdl: %q", got)
	}
	if got := Best("", items, id, id); !slices.Equal(got, items) {
		t.Errorf("empty: %q", got)
	}
	if got := Best("qqq", items, id, id); got != nil {
		t.Errorf("no match: %q", got)
	}
}

func TestCommonPrefixAndNumbered(t *testing.T) {
	if p := CommonPrefix([]string{"/resume", "/rewind"}); p != "/re" {
		t.Errorf("CommonPrefix = %q", p)
	}
	if p := CommonPrefix(nil); p != "" {
		t.Errorf("CommonPrefix(nil) = %q", p)
	}
	last := []string{"a", "b"}
	for arg, want := range map[string]string{"1": "a", "2": "b", "3": "", "0": "", "x": ""} {
		if got, ok := Numbered(arg, last); got != want || ok != (want != "") {
			t.Errorf("Numbered(%q) = %q, %v", arg, got, ok)
		}
	}
}

// TestList: numbered rows, at most max, the rest counted; ids in order.
func TestList(t *testing.T) {
	id := func(s string) string { return s }
	rows, ids := List([]string{"a", "b", "c"}, 2, id, func(s string) string { return "row " + s })
	if rows != "\n   1. row a\n   2. row b\n  … and 1 more" || !slices.Equal(ids, []string{"a", "b"}) {
		t.Errorf("rows %q, ids %q", rows, ids)
	}
}
