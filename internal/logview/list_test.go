package logview

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/session"
)

// TestListSaysWhatTheLimitLeftOut (issue 48 "Why" 12): a list cut at
// --limit ends with how many more there are and how to see them; an
// uncut list and the JSON one say nothing of it.
func TestListSaysWhatTheLimitLeftOut(t *testing.T) {
	root := t.TempDir()
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i := range 5 {
		now := start.Add(time.Duration(i) * time.Minute)
		l, err := session.Create(root, session.Header{ID: session.NewID(now), CreatedAt: now, Cwd: "/w"}, session.Options{Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
	}
	for _, c := range []struct {
		limit int
		json  bool
		want  string
	}{
		{3, false, "… 2 more (reins log --limit N lists more, --limit 0 every one)\n"},
		{5, false, ""},
		{0, false, ""},
		{3, true, ""},
	} {
		var b bytes.Buffer
		if err := List(&b, root, c.json, Filter{Limit: c.limit, Cwd: "/w"}); err != nil {
			t.Fatal(err)
		}
		got := ""
		if i := strings.Index(b.String(), "… "); i >= 0 {
			got = b.String()[i:]
		}
		if got != c.want {
			t.Errorf("limit %d json %v: tail %q, want %q\n%s", c.limit, c.json, got, c.want, b.String())
		}
	}
}
