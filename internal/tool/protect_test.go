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

// TestWriteEditRefuseGitAndNewNames (issue 47): every repository control
// folder, at any depth, and the root's new protected names are refused;
// config sandbox.git: writable lets .git through (not hooks and config);
// the same names below the root stay writable project files; with the
// workspace at $HOME, the user's rc files are refused.
func TestWriteEditRefuseGitAndNewNames(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	writeFiles(t, env.Workspace, map[string]string{".git/info/exclude": "a\n", "sub/.git/config": "a\n"})
	for _, p := range []string{".git/info/exclude", ".git/objects/info/alternates", ".git/commondir", "sub/.git/config", "a/b/.GIT/hooks/x",
		".agents/skills/x/SKILL.md", ".vscode/tasks.json", ".idea/workspace.xml", ".gitmodules", ".envrc", ".codex/config.toml", ".gemini/settings.json"} {
		wantResult(t, call(t, env, "write", map[string]any{"path": p, "content": "planted"}), true, "is protected")
	}
	for _, p := range []string{"pkg/.vscode/tasks.json", "node_modules/x/CLAUDE.md", "pkg/.reins/config.yaml", ".gitignore"} {
		wantResult(t, call(t, env, "write", map[string]any{"path": p, "content": "ok"}), false, "wrote")
	}
	env.Sandbox.GitWritable = true
	wantResult(t, call(t, env, "write", map[string]any{"path": ".git/info/exclude", "content": "x"}), false, "wrote")
	wantResult(t, call(t, env, "write", map[string]any{"path": ".git/config", "content": "x"}), true, "is protected")

	home := newEnv(t, WorkspaceWrite)
	t.Setenv("HOME", home.Workspace)
	for _, p := range []string{".bashrc", ".config/fish/config.fish", ".gitconfig", ".local/bin/git"} {
		wantResult(t, call(t, home, "write", map[string]any{"path": p, "content": "planted"}), true, "is protected")
	}
	wantResult(t, call(t, home, "write", map[string]any{"path": "notes.txt", "content": "ok"}), false, "wrote")
}
