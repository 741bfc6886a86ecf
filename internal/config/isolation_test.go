package config

import "testing"

// `isolation: worktree` reads the same in a reins file and a Claude Code
// file (Claude Code has the key too).
func TestAgentIsolation(t *testing.T) {
	d := newAgentDirs(t)
	d.reins(t, "writer.md", agentFile("isolation: worktree\n", "write"))
	d.claude(t, "cc.md", agentFile("name: cc\nisolation: worktree\n", "write"))
	d.reins(t, "plain.md", agentFile("description: x\n", "plain"))
	ags, warns, err := LoadAgents(LoadOptions{Home: d.home, Cwd: d.cwd, Trusted: true}, nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("LoadAgents: %v %v", err, warns)
	}
	for name, want := range map[string]string{"writer": IsolationWorktree, "cc": IsolationWorktree, "plain": ""} {
		ag, ok := ags.Get(name)
		if !ok || ag.Isolation != want {
			t.Errorf("%s: isolation %q, want %q", name, ag.Isolation, want)
		}
	}
}
