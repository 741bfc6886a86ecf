package session

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestResolvePrefix(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"20260101-000000-aaaa1111", "20260101-000000-aaab2222", "20260102-000000-cccc3333"} {
		if err := os.MkdirAll(filepath.Join(dir, id), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, id, FileName), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(dir, "20260103-no-log"), 0o755) // no session.jsonl: not a session
	for prefix, want := range map[string]string{
		"20260101-000000-aaaa1111": "20260101-000000-aaaa1111",
		"20260101-000000-aaaa":     "20260101-000000-aaaa1111",
		"20260102":                 "20260102-000000-cccc3333",
	} {
		if got, err := Resolve(dir, prefix); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", prefix, got, err, want)
		}
	}
	var amb *AmbiguousError
	if _, err := Resolve(dir, "20260101-000000-aaa"); !errors.As(err, &amb) || len(amb.Candidates) != 2 {
		t.Errorf("ambiguous prefix: %v", err)
	}
	for _, p := range []string{"", "20260103", "20260103", "..", "../x", "nope"} {
		if _, err := Resolve(dir, p); !errors.Is(err, ErrNotFound) {
			t.Errorf("Resolve(%q) = %v, want ErrNotFound", p, err)
		}
	}
}
