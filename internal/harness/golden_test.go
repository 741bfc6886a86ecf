package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/session"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var update = flag.Bool("update", false, "rewrite golden files")

// newTestHarness is a harness on a throwaway home and workspace.
func newTestHarness(t *testing.T) *Harness {
	t.Helper()
	h, err := New(Options{Home: t.TempDir(), Cwd: t.TempDir(), Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// normalizeLog replaces what differs between runs — ids, times, paths,
// ports — so the rest of the log can be compared byte for byte.
func normalizeLog(t *testing.T, path string, h *Harness) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ld, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.ReplaceAll(b, []byte(ld.Header.ID), []byte("SESSION"))
	b = bytes.ReplaceAll(b, []byte(h.Cwd), []byte("CWD"))
	b = regexp.MustCompile(`"(time|createdAt)":"[^"]*"`).ReplaceAll(b, []byte(`"$1":"TIME"`))
	b = regexp.MustCompile(`"id":"chatcmpl-[^"]*"`).ReplaceAll(b, []byte(`"id":"ID"`))
	b = regexp.MustCompile(`child: child-[0-9a-f]{8}`).ReplaceAll(b, []byte(`child: CHILD-ID`))
	// One event per line, pretty enough to review in a diff.
	var out bytes.Buffer
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		out.Write(line)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", p, d)
	}
}

// TestGoldenEmptyThenOK pins the whole session log of a run whose first
// completion is empty: llm/retry with EMPTY_RESPONSE, llm/retry-started,
// the failed attempt's chunks kept, exactly one assistant/message.
func TestGoldenEmptyThenOK(t *testing.T) {
	sc, err := mock.Parse([]byte(`
replies:
  - fault: empty
    usage: {input: 7, output: 0}
  - text: recovered answer
    chunk: 9
    usage: {input: 11, output: 3}
`))
	if err != nil {
		t.Fatal(err)
	}
	url, srv, stop := mock.StartTest(sc)
	defer stop()
	h := newTestHarness(t)
	m, err := h.ResolveModel("openai/golden-model", url)
	if err != nil {
		t.Fatal(err)
	}
	m.Retry.InitialDelay, m.Retry.MaxDelay, m.Retry.Jitter = time.Millisecond, time.Millisecond, 0
	s, err := h.NewSession(SessionOptions{Model: m, System: "golden system prompt"})
	if err != nil {
		t.Fatal(err)
	}
	res := s.RunTurn(context.Background(), "say something")
	s.Log.Close()
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("turn ended %+v", res)
	}
	if srv.Count() != 2 {
		t.Errorf("%d requests, want 2", srv.Count())
	}
	got := normalizeLog(t, s.Log.Path(), h)

	// The acceptance facts, checked apart from the golden bytes.
	var typesSeen []string
	for _, line := range bytes.Split(bytes.TrimSpace(got), []byte("\n"))[1:] {
		var e session.Event
		json.Unmarshal(line, &e)
		if e.Type != session.TypeAssistantChunk {
			typesSeen = append(typesSeen, e.Type)
		}
	}
	want := []string{"turn/start", "user/message", "step/start", "llm/retry", "llm/retry-started", "assistant/message", "step/end", "turn/end"}
	if d := cmp.Diff(want, typesSeen); d != "" {
		t.Errorf("event types (-want +got):\n%s", d)
	}
	if !bytes.Contains(got, []byte(`"failure":{"code":"EMPTY_RESPONSE"`)) {
		t.Error("llm/retry does not carry EMPTY_RESPONSE")
	}
	golden(t, "empty_then_ok.jsonl", got)
}

var durationRE = regexp.MustCompile(`"durationMs":\d+`)
