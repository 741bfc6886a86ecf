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
