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
	pathBin := fakeBin(t, filepath.Join(onPath, name))
	if p, err := Find(name, env); err != nil || p != pathBin {
		t.Errorf("on PATH: %q, %v; want %s", p, err, pathBin)
	}
	_, dir := selfDir(t)
	beside := fakeBin(t, filepath.Join(dir, name))
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

// TestTakeReinsDirect: a helper started directly (no $REINS_EXE) runs its
// children with the reins beside it, else on PATH — never with itself,
// which has no `reins sdk`.
func TestTakeReinsDirect(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("names without .exe")
	}
	defer func() { reins = "" }()
	onPath := t.TempDir()
	t.Setenv("PATH", onPath)
	t.Setenv(ReinsEnv, "")
	exe, dir := selfDir(t)
	if _, err := os.Stat(filepath.Join(dir, "reins")); err == nil {
		t.Fatalf("a reins beside the test binary already: %s", dir)
	}
	TakeReins()
	if p, _ := Reins(); p != exe {
		t.Errorf("no reins anywhere: Reins() = %q, want this executable", p)
	}
	pathBin := fakeBin(t, filepath.Join(onPath, "reins"))
	TakeReins()
	if p, _ := Reins(); p != pathBin {
		t.Errorf("reins on PATH: Reins() = %q, want %s", p, pathBin)
	}
	beside := fakeBin(t, filepath.Join(dir, "reins"))
	TakeReins()
	if p, _ := Reins(); p != beside {
		t.Errorf("reins beside: Reins() = %q, want %s", p, beside)
	}
	t.Setenv(ReinsEnv, "/opt/reins")
	TakeReins()
	if p, _ := Reins(); p != "/opt/reins" {
		t.Errorf("$%s: Reins() = %q", ReinsEnv, p)
	}
}

// fakeBin writes an executable shell script at path; the test removes it.
func fakeBin(t *testing.T, path string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(path) })
	return path
}

// selfDir is the directory of this test binary, symlinks resolved: the
// "beside the executable" of Find and TakeReins.
func selfDir(t *testing.T) (exe, dir string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		t.Fatal(err)
	}
	return exe, filepath.Dir(exe)
}
