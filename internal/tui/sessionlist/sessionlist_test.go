package sessionlist

import (
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/session"
)

// TestRow: short id, age in its largest unit, turns, the last stop and
// the first prompt on one line, escaped and cut.
func TestRow(t *testing.T) {
	now := time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC)
	in := session.Info{Header: session.Header{ID: "20261202T065500Z-ab12-rest-of-id", CreatedAt: now.Add(-5 * time.Minute)},
		Turns: 3, Prompt: "fix\nthe \x1b[2J build"}
	if got, want := Row(in, now), `20261202T065500Z-ab1 · 5m ago · 3 turns · no turn · fix the \x1b[2J build`; got != want {
		t.Errorf("Row = %q, want %q", got, want)
	}
	for d, want := range map[time.Duration]string{-time.Second: "0s", 59 * time.Second: "59s", 3 * time.Hour: "3h", 47 * time.Hour: "47h", 72 * time.Hour: "3d"} {
		if got := age(d); got != want {
			t.Errorf("age(%v) = %q, want %q", d, got, want)
		}
	}
	if ShortID("short") != "short" {
		t.Error("a short id is cut")
	}
}
