package harness

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRecordChanges: a session's write, edit and apply_patch calls report
// the paths they are about to change, resolved, while the file is still
// as it was; a path outside the workspace, read-only tools and a refused
// call report nothing.
func TestRecordChanges(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: p/new.txt\n+hi\n*** Update File: a.txt\n*** Move to: moved.txt\n@@\n-a2\n+a3\n*** End Patch\n"
	args, _ := json.Marshal(map[string]string{"input": patch})
	f := newFixture(t, `
replies:
  - match: GO
    toolCalls:
      - {id: w1, name: write, arguments: {path: a.txt, content: "a1\n"}}
  - match: "to a.txt"
    toolCalls:
      - {id: e1, name: edit, arguments: {path: a.txt, old_string: "a1", new_string: "a2"}}
  - match: "occurrence in a.txt"
    toolCalls:
      - {id: r1, name: read, arguments: {path: a.txt}}
      - {id: w2, name: write, arguments: {path: ../outside.txt, content: "x"}}
  - match: "outside"
    toolCalls:
      - {id: p1, name: apply_patch, arguments: `+string(args)+`}
  - match: "moved.txt"
    text: done
`, map[string]string{})
	m, err := f.h.ResolveModel("openai/test", f.url)
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.h.NewSession(SessionOptions{Model: m, Tools: []string{"read", "write", "edit", "apply_patch"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var got [][]string
	var seen []string
	s.RecordChanges(func(_ context.Context, paths []string) {
		if paths == nil {
			return // a tool that names no file
		}
		got = append(got, paths)
		b, err := os.ReadFile(paths[0])
		if err != nil {
			b = []byte("<absent>")
		}
		seen = append(seen, string(b))
	})
	res := s.Run(context.Background(), "GO")
	if res.Reason != "completed" {
		s.Log.Flush()
		t.Fatalf("turn: %+v %+v; log:\n%s", res, res.Failure, loadEventsText(t, s.Log.Path()))
	}
	ws := f.h.Cwd
	want := [][]string{
		{filepath.Join(ws, "a.txt")},
		{filepath.Join(ws, "a.txt")},
		{filepath.Join(ws, "p/new.txt"), filepath.Join(ws, "a.txt"), filepath.Join(ws, "moved.txt")},
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("reported %q, want %q", got, want)
	}
	if !slices.Equal(seen, []string{"<absent>", "a1\n", "<absent>"}) {
		t.Errorf("the files when reported: %q (each before its change)", seen)
	}
}

func loadEventsText(t *testing.T, path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
