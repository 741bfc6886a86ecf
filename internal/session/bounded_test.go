package session

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/smallfile"
)

// TestLoadRefusesNonRegular: a session.jsonl that is a symlink to
// /dev/zero (or a FIFO) is refused by Load, Reopen, Scan and Tail, not read
// until memory runs out or blocked on forever.
func TestLoadRefusesNonRegular(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "20260101-000000-deadbeef")
	os.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, FileName)
	if err := os.Symlink("/dev/zero", path); err != nil {
		t.Fatal(err)
	}
	var se *smallfile.Error
	if _, err := Load(path); !errors.As(err, &se) {
		t.Errorf("Load: %v, want not a regular file", err)
	}
	if l, _, err := Reopen(path, Options{}); !errors.As(err, &se) {
		if l != nil {
			l.Close()
		}
		t.Errorf("Reopen: %v, want not a regular file", err)
	}
	infos, err := Scan(root)
	if err != nil || len(infos) != 1 || !errors.As(infos[0].Err, &se) {
		t.Errorf("Scan: %+v, %v", infos, err)
	}
	if _, err := NewTail(path, false).Poll(); !errors.As(err, &se) {
		t.Errorf("Tail.Poll: %v", err)
	}
}

// repeatReader yields n bytes of c, then EOF.
type repeatReader struct {
	c byte
	n int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.n)]
	if len(p) > 0 {
		p[0] = r.c
		for i := 1; i < len(p); i *= 2 {
			copy(p[i:], p[:i])
		}
	}
	r.n -= int64(len(p))
	return len(p), nil
}

// TestReadLongLine: a 300 MB line is "line too long", read with bounded
// memory (at most about two copies of the 64 MiB line limit), not held whole.
func TestReadLongLine(t *testing.T) {
	head := `{"type":"session","version":1,"id":"x","createdAt":"2026-01-01T00:00:00Z","cwd":"/"}` + "\n"
	body := io.MultiReader(strings.NewReader(head+`{"type":"turn/start","seq":0,"time":"2026-01-01T00:00:00Z","data":{"turn":0}}`+"\n"),
		&repeatReader{'x', 300 << 20}, strings.NewReader("\n"))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Read(body)
	runtime.ReadMemStats(&after)
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Reason != "line too long" || ce.Line != 3 {
		t.Fatalf("err = %v, want line 3 too long", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
		t.Errorf("reading allocated %d MiB", alloc>>20)
	}
	// The same line without its newline, last in the file, is a crash
	// tail: dropped, and what came before is kept.
	ld, err := Read(io.MultiReader(strings.NewReader(head+`{"type":"turn/start","seq":0,"time":"2026-01-01T00:00:00Z","data":{"turn":0}}`+"\n"),
		&repeatReader{'x', 65 << 20}))
	if err != nil || len(ld.Events) != 2 || ld.Repair.DroppedBytes != 65<<20 {
		t.Fatalf("crash tail: %v, %+v", err, ld)
	}
}
