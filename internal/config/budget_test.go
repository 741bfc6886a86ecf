package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// subagents.stallTimeout: 5m by default, a positive duration when set.
func TestSubagentsStallTimeout(t *testing.T) {
	for _, tt := range []struct {
		name, home, cwd string
		want            time.Duration
		bad             bool
	}{
		{"default", "", "", DefaultStallTimeout, false},
		{"set", "subagents: {stallTimeout: 30s}\n", "", 30 * time.Second, false},
		{"cwd overrides home", "subagents: {stallTimeout: 30s}\n", "subagents: {stallTimeout: 10m}\n", 10 * time.Minute, false},
		{"zero", "subagents: {stallTimeout: 0s}\n", "", 0, true},
		{"not a duration", "subagents: {stallTimeout: later}\n", "", 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bad := ""
			if tt.bad {
				bad = "subagents.stallTimeout"
			}
			c := loadCase(t, tt.home, tt.cwd, bad)
			if c == nil {
				return
			}
			if c.Subagents.StallTimeout != tt.want {
				t.Errorf("StallTimeout = %v, want %v", c.Subagents.StallTimeout, tt.want)
			}
		})
	}
}

// budget: {tokens, usd, time}: layers merge per field; each must be > 0.
func TestConfigBudget(t *testing.T) {
	for _, tt := range []struct {
		name, home, cwd string
		want            Budget
		badKey          string
	}{
		{"none", "", "", Budget{}, ""},
		{"all", "budget: {tokens: 20000, usd: 0.5, time: 30m}\n", "", Budget{Tokens: 20000, USD: 0.5, Time: 30 * time.Minute}, ""},
		{"per field", "budget: {tokens: 100, usd: 2}\n", "budget: {usd: 1}\n", Budget{Tokens: 100, USD: 1}, ""},
		{"zero tokens", "budget: {tokens: 0}\n", "", Budget{}, "budget.tokens"},
		{"negative usd", "budget: {usd: -1}\n", "", Budget{}, "budget.usd"},
		{"zero time", "budget: {time: 0s}\n", "", Budget{}, "budget.time"},
		{"unknown key", "budget: {dollars: 3}\n", "", Budget{}, "budget.dollars"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := loadCase(t, tt.home, tt.cwd, tt.badKey)
			if c == nil {
				return
			}
			if c.Budget != tt.want {
				t.Errorf("Budget = %+v, want %+v", c.Budget, tt.want)
			}
		})
	}
}

// An agent file's budget: is read with the same rules.
func TestAgentFileBudget(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "agents")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "capped.md"), []byte("---\nname: capped\ndescription: d\nbudget: {tokens: 5000, time: 2m}\n---\nbody\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "broken.md"), []byte("---\nname: broken\ndescription: d\nbudget: {tokens: many}\n---\nbody\n"), 0o644)
	agents, warnings, err := LoadAgents(LoadOptions{Home: home}, Default())
	if err != nil {
		t.Fatal(err)
	}
	ag, ok := agents.Get("capped")
	if !ok || ag.Budget != (Budget{Tokens: 5000, Time: 2 * time.Minute}) {
		t.Fatalf("capped: %+v", ag)
	}
	if b := agents.Broken("broken"); b == nil || !strings.Contains(b.Error(), "budget.tokens") {
		t.Errorf("broken budget: %v (warnings %v)", b, warnings)
	}
}
