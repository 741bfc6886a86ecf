package tool

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteEditRefuseProtected: write and edit refuse the protected paths
// (issue 26 item 4) — the built-in list, config sandbox.protect through
// Env.Protect, a case variant of .git, and a symlink inside the workspace
// that points at one — naming the path as protected, and leave the file as
// it was.
func TestWriteEditRefuseProtected(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	env.Protect = []string{"secrets/keep.txt"}
	writeFiles(t, env.Workspace, map[string]string{
		".git/hooks/pre-commit": "#!/bin/sh\n",
		".git/config":           "[core]\n",
		".mcp.json":             "{}\n",
		".claude/agents/a.md":   "a\n",
		".reins/config.yaml":    "a: 1\n",
		"secrets/keep.txt":      "a\n",
		"free.txt":              "a\n",
	})
	if err := os.Symlink(".git/hooks", filepath.Join(env.Workspace, "hooks")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		".git/hooks/pre-commit", ".git/hooks/post-checkout", ".git/config", ".mcp.json",
		".claude/agents/a.md", ".reins/config.yaml", "secrets/keep.txt",
		"hooks/pre-push", "./x/../.git/hooks/pre-commit", filepath.Join(env.Workspace, ".mcp.json"),
	} {
		t.Run(p, func(t *testing.T) {
			before := snapshot(t, env.Workspace)
			wantResult(t, call(t, env, "write", map[string]any{"path": p, "content": "planted"}), true, "is protected")
			wantResult(t, call(t, env, "edit", map[string]any{"path": p, "old_string": "a", "new_string": "planted"}), true, "is protected")
			if after := snapshot(t, env.Workspace); after != before {
				t.Errorf("the workspace changed:\n%s\nwas\n%s", after, before)
			}
		})
	}
	wantResult(t, call(t, env, "edit", map[string]any{"path": "free.txt", "old_string": "a", "new_string": "b"}), false, "replaced 1 occurrence")
	wantResult(t, call(t, env, "write", map[string]any{"path": ".gitignore", "content": "x\n"}), false, "wrote")

	var pe *ProtectedPathError
	if err := env.checkProtected(".GIT/hooks/x", filepath.Join(env.Workspace, ".GIT/hooks/x")); !errors.As(err, &pe) || pe.Protected != ".git/hooks" {
		t.Errorf("case variant: %v", err)
	}
}
