package tool

import (
	"fmt"
	"os"
	"testing"
)

// TestWalkStoppedEarlyClosesDirs: a grep cut short by its match cap leaves
// no directory open (the walk keeps parents open for their children).
func TestWalkStoppedEarlyClosesDirs(t *testing.T) {
	env := newEnv(t, ReadOnly)
	files := map[string]string{}
	for i := range 40 {
		for j := range 20 {
			files[fmt.Sprintf("d%d/e%d/f%d.txt", i, j%4, j)] = "hit\nhit\n"
		}
	}
	writeFiles(t, env.Workspace, files)
	before := openFDs(t)
	for range 5 {
		wantResult(t, call(t, env, "grep", map[string]any{"pattern": "hit"}), false, "[stopped after 500 matches")
	}
	if after := openFDs(t); after > before {
		t.Errorf("%d file descriptors open after the walks, %d before", after, before)
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(es)
}
