package smallfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok")
	os.WriteFile(ok, []byte("hello"), 0o644)
	big := filepath.Join(dir, "big")
	os.WriteFile(big, []byte("0123456789"), 0o644)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path, want, err string
	}{
		{ok, "hello", ""},
		{big, "", big + ": larger than 8 bytes"},
		{fifo, "", fifo + ": not a regular file"},
		{dir, "", dir + ": not a regular file"},
		{"/dev/zero", "", "/dev/zero: not a regular file"},
	}
	for _, tt := range tests {
		b, err := Read(tt.path, 8)
		if tt.err == "" {
			if err != nil || string(b) != tt.want {
				t.Errorf("Read(%s) = %q, %v; want %q", tt.path, b, err, tt.want)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || err.Error() != tt.err {
			t.Errorf("Read(%s) err = %v, want %s", tt.path, err, tt.err)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing"), 8); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v, want not-exist", err)
	}
	if got := size(Limit); got != "1 MiB" || !strings.HasSuffix(size(3), "bytes") {
		t.Errorf("size = %q", got)
	}
}

// TestOpen refuses what is not a regular file before anything is read, and
// a FIFO without a writer does not block the open.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok")
	os.WriteFile(ok, []byte("hello"), 0o644)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	f, err := Open(ok, os.O_RDWR|os.O_APPEND)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, p := range []string{fifo, link, dir} {
		var e *Error
		if f, err := Open(p, os.O_RDONLY); !errors.As(err, &e) || e.Reason != "not a regular file" {
			if f != nil {
				f.Close()
			}
			t.Errorf("Open(%s) = %v, want not a regular file", p, err)
		}
	}
}
