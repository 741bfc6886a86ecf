//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestProcCounterCounts: the counter counts the names that start with a
// digit 1–9, across several reads of its buffer, and again after a rewind.
func TestProcCounterCounts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		many  int // more numeric names, enough to need several getdents
		want  int
	}{
		{"empty", nil, 0, 0},
		{"only others", []string{"self", "0", "0x", ".hidden", "sys", "-1"}, 0, 0},
		{"mixed", []string{"1", "42", "9", "999999", "self", "0", "abc", "1x"}, 0, 5},
		{"many", []string{"self", "net"}, 1500, 1500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for i := range tc.many {
				if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(100000+i)), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			c, err := newProcCounter(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer c.close()
			for round := range 3 {
				if got := c.count(); got != tc.want {
					t.Fatalf("round %d: count %d, want %d", round, got, tc.want)
				}
			}
		})
	}
}

// TestProcCountAllocatesNothing: the container's init counts /proc every
// pidsPoll for the program's whole life; a count that allocates grows the
// init's heap (and every confined child's memory) until the collector runs.
func TestProcCountAllocatesNothing(t *testing.T) {
	c, err := newProcCounter("/proc")
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if n := c.count(); n < 1 {
		t.Fatalf("count of /proc: %d", n)
	}
	if a := testing.AllocsPerRun(50, func() { c.count() }); a != 0 {
		t.Fatalf("a count allocates %.1f times", a)
	}
}
