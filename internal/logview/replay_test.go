package logview

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// replayRoot holds stored logs with every event type (internal/session's
// testdata/replay); testdata/replay-*.golden is what reins log printed for
// them before events had typed payloads (REINS_WRITE_REPLAY=1 writes it
// again). The output must stay byte for byte the same.
const replayRoot = "../session/testdata/replay"

func TestReplayGolden(t *testing.T) {
	defer func(l *time.Location) { time.Local = l }(time.Local)
	time.Local = time.UTC
	for _, id := range []string{"replay-parent", "replay-child", "replay-repaired", "replay-hooks"} {
		ld, err := Load(replayRoot, id)
		if err != nil {
			t.Fatal(err)
		}
		var text, js bytes.Buffer
		Show(&text, replayRoot, ld)
		if err := JSON(&js, ld); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, id+".txt", text.Bytes())
		checkGolden(t, id+".json", js.Bytes())
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
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
		t.Errorf("%s differs from what reins printed before:\n got:\n%s\nwant:\n%s", name, got, want)
	}
}
