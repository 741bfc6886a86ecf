package callpreview

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinsdev/reins/internal/tui/linediff"
)

// TestOverwriteKeepsRemovedLines (issue 48 item 2): an overwrite's
// preview has the removed lines, and Capped keeps the first lines and
// counts the rest.
func TestOverwriteKeepsRemovedLines(t *testing.T) {
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("keep\nold\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := Of(cwd, "write", json.RawMessage(`{"path":"a.txt","content":"keep\nnew 1\nnew 2\nnew 3\n"}`))
	var del, add int
	for _, l := range p.Diff {
		switch l.Kind {
		case linediff.Del:
			del++
		case linediff.Add:
			add++
		}
	}
	if del != 1 || add != 3 || p.Note != "overwrites 9 bytes with 23 bytes" {
		t.Fatalf("diff %+v note %q", p.Diff, p.Note)
	}
	for _, c := range []struct{ max, shown, more int }{{10, 5, 0}, {5, 5, 0}, {2, 2, 3}} {
		shown, more := Capped(p.Diff, c.max)
		if len(shown) != c.shown || more != c.more {
			t.Errorf("Capped(%d) = %d lines, %d more; want %d, %d", c.max, len(shown), more, c.shown, c.more)
		}
	}
}

func TestFileTool(t *testing.T) {
	for name, want := range map[string]bool{"write": true, "edit": true, "multi_edit": true, "apply_patch": true, "bash": false, "read": false, "mcp__x__write": false} {
		if FileTool(name) != want {
			t.Errorf("FileTool(%s) = %v", name, !want)
		}
	}
}
