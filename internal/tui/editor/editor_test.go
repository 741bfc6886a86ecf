package editor

import "testing"

// TestHistory: Up recalls the prompts sent, newest first, keeping what
// was typed for Down to give back; a prompt sent twice in a row is kept
// once; at most max are kept.
func TestHistory(t *testing.T) {
	ed := New(true, 1000)
	var h History
	if h.Up(&ed) || h.Down(&ed) {
		t.Fatal("an empty history moved")
	}
	for _, p := range []string{"one", "two", "two", "three"} {
		h.Add(p, 2)
	}
	ed.SetValue("typing")
	var got []string
	for h.Up(&ed) {
		got = append(got, ed.Value())
	}
	if len(got) != 2 || got[0] != "three" || got[1] != "two" {
		t.Fatalf("Up recalled %q", got)
	}
	if !h.Down(&ed) || ed.Value() != "three" || !h.Down(&ed) || ed.Value() != "typing" || h.Down(&ed) {
		t.Fatalf("Down: %q", ed.Value())
	}
	h.Up(&ed)
	h.Stop()
	if h.Down(&ed) {
		t.Fatal("Down after Stop moved")
	}
}
