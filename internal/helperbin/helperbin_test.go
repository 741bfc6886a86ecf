package helperbin

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestFind: $ENV wins, then a binary beside this executable, then PATH;
// none of them is ErrNotFound.
func TestFind(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("names without .exe")
	}
	const env = "REINS_HELPERBIN_TEST"
	name := "reins-helperbin-test-" + filepath.Base(t.TempDir())
	onPath := t.TempDir()
	t.Setenv("PATH", onPath)
	t.Setenv(env, "")
	if _, err := Find(name, env); !errors.Is(err, ErrNotFound) {
		t.Fatalf("nothing to find: %v", err)
	}
	pathBin := filepath.Join(onPath, name)
	if err := os.WriteFile(pathBin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p, err := Find(name, env); err != nil || p != pathBin {
		t.Errorf("on PATH: %q, %v; want %s", p, err, pathBin)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, err = filepath.EvalSymlinks(exe)
	if err != nil {
		t.Fatal(err)
	}
	beside := filepath.Join(filepath.Dir(exe), name)
	if err := os.WriteFile(beside, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Skipf("cannot write beside the test binary: %v", err)
	}
	defer os.Remove(beside)
	if p, err := Find(name, env); err != nil || p != beside {
		t.Errorf("beside the executable: %q, %v; want %s (over PATH)", p, err, beside)
	}
	t.Setenv(env, "/elsewhere/"+name)
	if p, err := Find(name, env); err != nil || p != "/elsewhere/"+name {
		t.Errorf("$%s: %q, %v", env, p, err)
	}
}

// TestReins: the reins a helper took from $REINS_EXE, which leaves the
// environment; else this executable.
func TestReins(t *testing.T) {
	t.Setenv(ReinsEnv, "")
	TakeReinsEnv()
	self, _ := os.Executable()
	if p, err := Reins(); err != nil || p != self {
		t.Errorf("Reins() = %q, %v; want %s", p, err, self)
	}
	t.Setenv(ReinsEnv, "/opt/reins/bin/reins")
	TakeReinsEnv()
	defer func() { reins = "" }()
	if p, _ := Reins(); p != "/opt/reins/bin/reins" {
		t.Errorf("Reins() = %q with $%s set", p, ReinsEnv)
	}
	if v, ok := os.LookupEnv(ReinsEnv); ok {
		t.Errorf("$%s is still set (%q): the session's processes would inherit it", ReinsEnv, v)
	}
}
