package sessionlist

import (
	"strings"
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

// TestChoose: one best match is the choice; otherwise the list, numbered,
// with the ids it numbered, or what says nothing matches.
func TestChoose(t *testing.T) {
	now := time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC)
	list := []session.Info{
		{Header: session.Header{ID: "s-aaa", CreatedAt: now}, Prompt: "fix the build"},
		{Header: session.Header{ID: "s-bbb", CreatedAt: now}, Prompt: "write docs"},
	}
	if id, say, ids := Choose("docs", list, 10, now); id != "s-bbb" || say != "" || ids != nil {
		t.Errorf("one match: %q %q %q", id, say, ids)
	}
	if id, say, ids := Choose("", list, 10, now); id != "" || len(ids) != 2 || !strings.Contains(say, " 2. s-bbb · 0s ago") {
		t.Errorf("all: %q %q %q", id, say, ids)
	}
	if _, say, ids := Choose("zzz", list, 10, now); ids != nil || say != `/resume: no session of this folder matches "zzz"` {
		t.Errorf("none: %q %q", say, ids)
	}
	if _, say, _ := Choose("", nil, 10, now); say != "/resume: no other session in this folder yet" {
		t.Errorf("empty: %q", say)
	}
}
