package view

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// replayRoot holds stored logs with every event type (internal/session's
// testdata/replay); testdata/replay-*.golden is the page's model of them
// (Detail, Tree) before events had typed payloads (REINS_WRITE_REPLAY=1
// writes it again). It must stay byte for byte the same.
const replayRoot = "../session/testdata/replay"

func TestReplayGolden(t *testing.T) {
	r := NewReader(replayRoot)
	for _, id := range []string{"replay-parent", "replay-child", "replay-repaired", "replay-hooks"} {
		d, err := r.Detail(id)
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, id+".detail", d)
	}
	tree, err := r.Tree("replay-parent")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "replay-parent.tree", tree)
}

func checkGolden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "replay-"+name+".golden")
	if os.Getenv("REINS_WRITE_REPLAY") == "1" {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the page's model before:\n got:\n%s\nwant:\n%s", name, got, want)
	}
}
