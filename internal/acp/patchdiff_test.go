package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// TestDescribeMultiEditAndPatch: multi_edit and apply_patch calls reach
// the editor with diff items, as edit and write do: one per replacement of
// a multi_edit; for apply_patch the whole file before and after for an
// update (live), the new text of an added file, the old text of a deleted
// one, and each chunk's lines on a replay; a moved file's diff names its
// new path.
func TestDescribeMultiEditAndPatch(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.go"), []byte("package a\n\nfunc A() int { return 1 }\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "gone.txt"), []byte("bye\n"), 0o644)
	type item struct{ path, old, new string }
	p := func(n string) string { return filepath.Join(ws, n) }
	patchText := "*** Begin Patch\n*** Update File: a.go\n*** Move to: b.go\n@@\n-func A() int { return 1 }\n+func A() int { return 2 }\n*** Add File: n.txt\n+hello\n*** Delete File: gone.txt\n*** End Patch"
	tests := []struct {
		name, args string
		live       bool
		title      string
		want       []item // old "-" for none
	}{
		{"multi_edit", `{"path":"a.go","edits":[{"old_string":"A","new_string":"B"},{"old_string":"1","new_string":"2"}]}`, true, "Edit a.go",
			[]item{{p("a.go"), "A", "B"}, {p("a.go"), "1", "2"}}},
		{"apply_patch", `{"input":` + quote(patchText) + `}`, true, "Patch a.go, n.txt, gone.txt",
			[]item{{p("b.go"), "package a\n\nfunc A() int { return 1 }\n", "package a\n\nfunc A() int { return 2 }\n"}, {p("n.txt"), "-", "hello\n"}, {p("gone.txt"), "bye\n", ""}}},
		{"apply_patch", `{"input":` + quote(patchText) + `}`, false, "Patch a.go, n.txt, gone.txt",
			[]item{{p("b.go"), "func A() int { return 1 }\n", "func A() int { return 2 }\n"}, {p("n.txt"), "-", "hello\n"}}},
		{"apply_patch", `{"input":"not a patch"}`, true, "Patch", nil},
	}
	for _, tc := range tests {
		c := describe(ws, "c1", tc.name, tc.args, tc.live)
		if c.kind != sdk.ToolKindEdit {
			t.Errorf("%s: kind %q", tc.name, c.kind)
		}
		if c.title != tc.title {
			t.Errorf("%s (live %v): title %q, want %q", tc.name, tc.live, c.title, tc.title)
		}
		if len(c.diff) != len(tc.want) {
			t.Errorf("%s (live %v): %d diff items, want %d: %+v", tc.name, tc.live, len(c.diff), len(tc.want), c.diff)
			continue
		}
		for i, w := range tc.want {
			d := c.diff[i].Diff
			if d == nil {
				t.Errorf("%s item %d: not a diff", tc.name, i)
				continue
			}
			old := "-"
			if d.OldText != nil {
				old = *d.OldText
			}
			if d.Path != w.path || old != w.old || d.NewText != w.new {
				t.Errorf("%s (live %v) item %d: %s %q -> %q, want %s %q -> %q", tc.name, tc.live, i, d.Path, old, d.NewText, w.path, w.old, w.new)
			}
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
