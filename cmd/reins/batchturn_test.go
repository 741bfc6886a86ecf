package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/session"
)

// A batch session's events are written inside a turn (issue 28): its log
// opens with turn/start and ends with turn/end, and `reins log` lists it
// with one turn, not "0 turn(s)".
func TestBatchSessionHasATurn(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	tasks := writeTasks(t, t.TempDir(), 2)
	if code, stderr := exitCode(t, reinsCmd(t, home, "batch", "-m", "mock/echo", "--cwd", dir, tasks)); code != 0 {
		t.Fatalf("batch: %d %s", code, stderr)
	}
	logs, _ := filepath.Glob(filepath.Join(home, "sessions", "*", session.FileName))
	var root *session.Loaded
	for _, p := range logs {
		ld, err := session.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if ld.Header.Origin == session.OriginBatch {
			root = ld
		}
	}
	if root == nil {
		t.Fatalf("no batch session among %v", logs)
	}
	var types []string
	for _, e := range root.Events {
		types = append(types, e.Type)
	}
	if len(types) < 2 || types[0] != session.TypeTurnStart || types[len(types)-1] != session.TypeTurnEnd {
		t.Fatalf("batch session events %v, want them inside one turn", types)
	}
	list := reinsCmd(t, home, "log", "--all")
	var out bytes.Buffer
	list.Stdout = &out
	if code, stderr := exitCode(t, list); code != 0 {
		t.Fatalf("log: %d %s", code, stderr)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, root.Header.ID) && !strings.Contains(line, "1 turn(s)") {
			t.Errorf("reins log lists the batch session as %q, want 1 turn(s)", line)
		}
	}
}
