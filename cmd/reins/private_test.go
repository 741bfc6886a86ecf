package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/reinsdev/reins/internal/llm/mock"
)

// umask0 runs cmd under umask 000, so a mode that depended on the
// caller's umask would show as world-writable.
func umask0(cmd *exec.Cmd) *exec.Cmd {
	cmd.Args = append([]string{"sh", "-c", `umask 000; exec "$0" "$@"`}, cmd.Args...)
	cmd.Path = "/bin/sh"
	return cmd
}

// TestPrivateFiles: a run makes $REINS_HOME 0700 and its session log 0600
// (in 0700 folders) whatever the umask; a home, sessions folder and log an
// older reins left 0755/0644 are tightened when the session is resumed;
// `reins trust` writes its list 0600 and tightens the home.
func TestPrivateFiles(t *testing.T) {
	sc, err := mock.Parse([]byte("fallback:\n  text: fine\n"))
	if err != nil {
		t.Fatal(err)
	}
	url, _, stop := mock.StartTest(sc)
	defer stop()
	home := filepath.Join(t.TempDir(), "home")
	check := func(when string, want map[string]fs.FileMode) {
		t.Helper()
		for p, w := range want {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			if got := fi.Mode().Perm(); got != w {
				t.Errorf("%s: %s is %o, want %o", when, p, got, w)
			}
		}
	}
	run := func(args ...string) {
		t.Helper()
		if code, stderr := exitCode(t, umask0(reinsCmd(t, home, args...))); code != 0 {
			t.Fatalf("reins %v: exit %d: %s", args, code, stderr)
		}
	}
	run("run", "--base-url", url, "-m", "openai/m", "hello")
	ents, err := os.ReadDir(filepath.Join(home, "sessions"))
	if err != nil || len(ents) != 1 {
		t.Fatalf("sessions: %v %v", ents, err)
	}
	id := ents[0].Name()
	sdir := filepath.Join(home, "sessions", id)
	log := filepath.Join(sdir, "session.jsonl")
	want := map[string]fs.FileMode{home: 0o700, filepath.Join(home, "sessions"): 0o700, sdir: 0o700, log: 0o600}
	check("after a run", want)

	for p, m := range map[string]fs.FileMode{home: 0o755, filepath.Join(home, "sessions"): 0o755, sdir: 0o755, log: 0o644} {
		if err := os.Chmod(p, m); err != nil {
			t.Fatal(err)
		}
	}
	run("run", "--resume", id, "--base-url", url, "-m", "openai/m", "again")
	check("after resuming", want)

	// reins trust: the list is 0600; a home left 0755 is tightened.
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	run("trust", "--yes", t.TempDir())
	check("after reins trust", map[string]fs.FileMode{home: 0o700, filepath.Join(home, "trusted.json"): 0o600})
}
