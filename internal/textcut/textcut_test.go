package textcut

import "testing"

// TestCutKeepsRunes: byte cuts never split a rune.
func TestCutKeepsRunes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{Cut("aébcdef", 5), "a…"},
		{Cut("short", 10), "short"},
		{LastBytes("aé", 1), ""},
		{LastBytes("abcé", 3), "cé"},
		{OneLine(" a\n\tb  c "), "a b c"},
	} {
		if c.in != c.want {
			t.Errorf("got %q, want %q", c.in, c.want)
		}
	}
}
