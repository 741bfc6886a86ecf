package view

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestOpen runs a stand-in xdg-open (a real process) and checks it got the
// address; without one on PATH, Open says so and runs nothing.
func TestOpen(t *testing.T) {
	bin := t.TempDir()
	got := filepath.Join(t.TempDir(), "arg")
	script := "#!/bin/sh\nprintf '%s' \"$1\" > " + got + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	const url = "http://127.0.0.1:1/?token=abc#s=x"
	if err := Open(context.Background(), url); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(got); err != nil || string(b) != url {
		t.Fatalf("xdg-open got %q (%v)", b, err)
	}
	t.Setenv("PATH", t.TempDir())
	if err := Open(context.Background(), url); !errors.Is(err, ErrNoOpener) {
		t.Fatalf("without xdg-open: %v", err)
	}
}
