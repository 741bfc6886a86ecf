package session

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func permOf(t *testing.T, p string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// TestLogIsPrivate: a new log is 0600 in 0700 folders (the sessions root
// included); a log an older reins left 0644 in a 0755 folder is 0600 and
// 0700 once it is reopened (resumed).
func TestLogIsPrivate(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sessions")
	l, err := Create(root, Header{ID: "s1", Cwd: "/w", CreatedAt: time.Unix(0, 0).UTC()}, Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	writeTurn(t, l, 1)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "s1", FileName)
	for p, want := range map[string]fs.FileMode{root: 0o700, filepath.Dir(path): 0o700, path: 0o600} {
		if got := permOf(t, p); got != want {
			t.Errorf("%s: mode %o, want %o", p, got, want)
		}
	}

	// As an older reins left it.
	for p, m := range map[string]fs.FileMode{filepath.Dir(path): 0o755, path: 0o644} {
		if err := os.Chmod(p, m); err != nil {
			t.Fatal(err)
		}
	}
	l, _, err = Reopen(path, Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for p, want := range map[string]fs.FileMode{filepath.Dir(path): 0o700, path: 0o600} {
		if got := permOf(t, p); got != want {
			t.Errorf("after Reopen, %s: mode %o, want %o", p, got, want)
		}
	}
}
