package testutil

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CanaryOnlyInHostLog checks the leak-canary promise of docs/subagents.md over a
// whole REINS_HOME after a run: the canary a test planted in a child's
// output must be in the host log (home/logs), which proves the child did
// emit it and the raw cause was kept for the operator, and in no other file
// (session logs, artifacts, config).
func CanaryOnlyInHostLog(tb testing.TB, home, canary string) {
	tb.Helper()
	logs := filepath.Join(home, "logs") + string(filepath.Separator)
	inHostLog := false
	err := filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch {
		case !bytes.Contains(data, []byte(canary)):
		case strings.HasPrefix(path, logs):
			inHostLog = true
		default:
			tb.Errorf("the canary reached %s", path)
		}
		return nil
	})
	if err != nil {
		tb.Errorf("reading %s: %v", home, err)
	}
	if !inHostLog {
		tb.Error("the canary is not in the host log: the children did not emit it, or raw causes are lost")
	}
}
