package filelock

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Two open files of one path exclude each other (the lock belongs to the
// open file, not the process), and closing the holder frees it.
func TestTryLockExcludesAndFrees(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	a, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := TryLock(a); err != nil {
		t.Fatalf("first lock: %v", err)
	}
	if err := TryLock(b); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock while held: %v, want ErrLocked", err)
	}
	a.Close()
	if err := TryLock(b); err != nil {
		t.Fatalf("lock after the holder closed: %v", err)
	}
}
