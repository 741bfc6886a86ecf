package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinsdev/reins/internal/tool"
)

// TestCheck: a submitted task's cwd must lie inside the worker's
// roots unless the worker allows full-access: "/" is refused, and so is a
// symlink inside a root that leads out of it.
func TestCheck(t *testing.T) {
	root := t.TempDir()
	inside := filepath.Join(root, "repo")
	os.Mkdir(inside, 0o755)
	out := t.TempDir()
	link := filepath.Join(root, "escape")
	os.Symlink(out, link)
	tests := []struct {
		cwd  string
		perm tool.Permission
		ok   bool
	}{
		{root, tool.WorkspaceWrite, true},
		{inside, tool.ReadOnly, true},
		{"/", tool.WorkspaceWrite, false},
		{"/", tool.ReadOnly, false},
		{out, tool.WorkspaceWrite, false},
		{link, tool.WorkspaceWrite, false},
		{root + "/../" + filepath.Base(out), tool.WorkspaceWrite, false},
		{"relative", tool.FullAccess, false},
		{"/", tool.FullAccess, true},
	}
	for _, tt := range tests {
		err := Check(tt.cwd, []string{root}, tt.perm)
		var we *Error
		if tt.ok != (err == nil) || err != nil && !errors.As(err, &we) {
			t.Errorf("Check(%s, %s) = %v, want ok %v", tt.cwd, tt.perm, err, tt.ok)
		}
	}
}
