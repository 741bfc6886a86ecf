package protect

import "testing"

func TestMatch(t *testing.T) {
	list := List([]string{"secrets", "../out", "/abs", "."})
	for _, tc := range []struct {
		rel, want string
	}{
		{".git/hooks/pre-commit", ".git/hooks"},
		{".git/hooks", ".git/hooks"},
		{".git/config", ".git/config"},
		{".GIT/Config", ".git/config"},
		{".git/objects/ab", ""},
		{".git/configx", ""},
		{".reins/config.yaml", ".reins"},
		{".claude/agents/x.md", ".claude"},
		{".mcp.json", ".mcp.json"},
		{"sub/.mcp.json", ""},
		{"secrets/key", "secrets"},
		{"main.go", ""},
		{"./.reins/../.reins/x", ".reins"},
	} {
		if got := Match(tc.rel, list); got != tc.want {
			t.Errorf("Match(%q) = %q, want %q", tc.rel, got, tc.want)
		}
	}
	if n := len(list); n != len(Builtin)+1 {
		t.Errorf("List kept %d paths, want %d (outside and absolute ones dropped)", n, len(Builtin)+1)
	}
}

func TestMatchNewRootNames(t *testing.T) {
	list := List(nil)
	for _, rel := range []string{".agents/skills/x/SKILL.md", ".vscode/tasks.json", ".idea/workspace.xml", ".gitmodules", ".envrc", ".codex/config.toml", ".gemini/settings.json"} {
		if Match(rel, list) == "" {
			t.Errorf("%s is not protected", rel)
		}
	}
	// Below the root they are project files like any other (a package in
	// node_modules that ships one must stay deletable).
	for _, rel := range []string{"pkg/.vscode/tasks.json", "node_modules/x/.envrc", "pkg/.reins/config.yaml"} {
		if p := Match(rel, list); p != "" {
			t.Errorf("%s is protected by %s", rel, p)
		}
	}
}

func TestWorkspace(t *testing.T) {
	for _, tc := range []struct {
		ws, home, rel, want string
	}{
		{"/home/u", "/home/u", ".bashrc", ".bashrc"},
		{"/home/u", "/home/u", ".config/fish/config.fish", ".config/fish"},
		{"/home/u", "/home/u", ".local/bin/git", ".local/bin"},
		{"/home/u", "/home/u", ".gitconfig", ".gitconfig"},
		{"/home", "/home/u", "u/.zshrc", "u/.zshrc"},
		{"/home", "/home/u", "u/.claude/settings.json", "u/.claude"},
		{"/home", "/home/u", "v/.zshrc", ""},
		{"/home/u/proj", "/home/u", ".bashrc", ""},
		{"/work", "/home/u", ".profile", ""},
		{"/home/u", "", ".bashrc", ""},
	} {
		if got := Match(tc.rel, Workspace(tc.ws, tc.home, nil)); got != tc.want {
			t.Errorf("Workspace(%s, home %s): Match(%s) = %q, want %q", tc.ws, tc.home, tc.rel, got, tc.want)
		}
	}
}

func TestIsGit(t *testing.T) {
	for rel, want := range map[string]bool{
		".git": true, ".git/config": true, "sub/.git/config": true, "a/b/.GIT/hooks/x": true,
		".gitignore": false, ".github/workflows/x": false, "git/config": false, "x.git/config": false, "main.go": false,
	} {
		if got := IsGit(rel); got != want {
			t.Errorf("IsGit(%q) = %v, want %v", rel, got, want)
		}
	}
}
