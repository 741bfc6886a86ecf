package batch

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestLockResults: a second writer of one results file is refused while
// the first holds it, and may take it once the first closed it.
func TestLockResults(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.jsonl")
	a, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := LockResults(a); err != nil {
		t.Fatal(err)
	}
	b, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := LockResults(b); !errors.Is(err, ErrResultsInUse) {
		t.Fatalf("second lock: %v, want in use", err)
	}
	a.Close()
	if err := LockResults(b); err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
}

func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.jsonl")
	os.WriteFile(p, []byte("{}\n"), 0o644)
	link := filepath.Join(dir, "l.jsonl")
	os.Symlink(p, link)
	hard := filepath.Join(dir, "h.jsonl")
	os.Link(p, hard)
	for _, q := range []string{p, link, hard, filepath.Join(dir, ".", "t.jsonl")} {
		if !SameFile(q, p) {
			t.Errorf("SameFile(%s, %s) = false", q, p)
		}
	}
	if SameFile(filepath.Join(dir, "new.jsonl"), p) {
		t.Error("a missing file is not the task file")
	}
}
