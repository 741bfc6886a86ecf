package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPermissionsConfig: `permissions:` rules from every layer add up,
// a malformed rule is an error naming the file and the key, and an agent
// file's rules are read too.
func TestPermissionsConfig(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("permissions: {allow: ['bash(go test:*)'], deny: ['bash(rm:*)']}\n"), 0o644)
	extra := filepath.Join(t.TempDir(), "x.yaml")
	os.WriteFile(extra, []byte("permissions:\n  allow: [write(docs/**), mcp__github__*]\n"), 0o644)
	c, err := Load(LoadOptions{Home: home, Extra: extra})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Permissions.Allow, []string{"bash(go test:*)", "write(docs/**)", "mcp__github__*"}) || !slices.Equal(c.Permissions.Deny, []string{"bash(rm:*)"}) {
		t.Errorf("permissions %+v", c.Permissions)
	}
	for bad, key := range map[string]string{
		"permissions: {allow: ['ok', 'mcp__x__y(z)']}\n": "permissions.allow[1]",
		"permissions: {deny: 'bash'}\n":                  "permissions.deny",
		"permissions: {ask: [bash]}\n":                   "permissions.ask",
	} {
		os.WriteFile(extra, []byte(bad), 0o644)
		_, err := Load(LoadOptions{Extra: extra})
		if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "x.yaml") {
			t.Errorf("%q: err %v, want one naming %s", bad, err, key)
		}
	}
	d := newAgentDirs(t)
	d.reins(t, "tester.md", agentFile("permissions: {allow: ['bash(go test:*)'], deny: [write]}\n", "x"))
	ags, _, err := LoadAgents(LoadOptions{Home: d.home, Cwd: d.cwd, Trusted: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := ags.Get("tester")
	if a == nil || !slices.Equal(a.Permissions.Allow, []string{"bash(go test:*)"}) || !slices.Equal(a.Permissions.Deny, []string{"write"}) {
		t.Errorf("agent permissions %+v", a)
	}
}
