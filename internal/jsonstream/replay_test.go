package jsonstream

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinsdev/reins/internal/session"
)

// TestReplayGolden: the stored logs with every event type (internal/session's
// testdata/replay), streamed as `reins run --stream-json` streams a live
// run's events, print what they printed before events had typed payloads
// (testdata/replay.golden, written by that code; REINS_WRITE_REPLAY=1
// writes it again): each event's data as it was written.
func TestReplayGolden(t *testing.T) {
	var out bytes.Buffer
	s := New(&out, "root-agent")
	for _, id := range []string{"replay-parent", "replay-child", "replay-repaired", "replay-hooks"} {
		ld, err := session.Load(filepath.Join("../session/testdata/replay", id, session.FileName))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ld.Events {
			s.Observe(ld.Header, e)
		}
	}
	if err := s.Close(map[string]string{"done": "yes"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "replay.golden")
	if os.Getenv("REINS_WRITE_REPLAY") == "1" {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("stream differs from what it was:\n got:\n%s\nwant:\n%s", out.Bytes(), want)
	}
}
