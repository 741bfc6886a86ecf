package childproc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The child's PATH decides, not this process's: an agent file's
// env: {PATH} finds its command (issue 28: only pi children did).
func TestLookPathUsesTheChildsPath(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "only-here-agent")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "not-exec"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/nonexistent", "HOME=/x", "PATH=relative:" + dir}
	if got, err := LookPath("only-here-agent", env); err != nil || got != bin {
		t.Fatalf("LookPath = %q, %v; want %q", got, err, bin)
	}
	if _, err := LookPath("only-here-agent", []string{"PATH=/usr/bin"}); !errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("found without the child's PATH: %v", err)
	}
	if _, err := LookPath("not-exec", env); err == nil {
		t.Fatal("a file without exec bits was found")
	}
	if got, err := LookPath(bin, nil); err != nil || got != bin {
		t.Fatalf("a path with a slash: %q, %v", got, err)
	}
}
