package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNonRegularFilesRefused: every file reins reads that a user or a
// repository names is refused when it is not a regular file — a
// session.jsonl symlinked to /dev/zero, a mock script or META.json that
// is /dev/zero — promptly, with a clear exit status, never read without
// end (on main these hung at gigabytes of memory).
func TestNonRegularFilesRefused(t *testing.T) {
	home := t.TempDir()
	id := "20260101-000000-deadbeef"
	dir := filepath.Join(home, "sessions", id)
	os.MkdirAll(dir, 0o755)
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "session.jsonl")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		env  string
		want int
		says string
	}{
		{[]string{"log", "--all"}, "", 0, "not a regular file"},
		{[]string{"log", id}, "", 1, "not a regular file"},
		{[]string{"log", "--json", "2026"}, "", 1, "not a regular file"},
		{[]string{"run", "-m", "mock/m", "--resume", id, "hi"}, "", 1, "not a regular file"},
		{[]string{"compact", id}, "", 1, "not a regular file"},
		{[]string{"mock-llm", "--script", "/dev/zero"}, "", 2, "not a regular file"},
		{[]string{"run", "-m", "mock/m", "hi"}, "REINS_MOCK_SCRIPT=/dev/zero", 2, "not a regular file"},
		{[]string{"wrap", "/dev/zero"}, "", 2, "not a regular file"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := reinsCmd(t, home, tc.args...)
			if tc.env != "" {
				cmd.Env = append(cmd.Env, tc.env)
			}
			var out, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, cmd); code != tc.want {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.want, stderr.String())
			}
			if !strings.Contains(out.String()+stderr.String(), tc.says) {
				t.Errorf("output lacks %q: %s%s", tc.says, out.String(), stderr.String())
			}
		})
	}
}
