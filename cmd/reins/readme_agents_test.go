package main

import (
	"os"
	"regexp"
	"testing"

	"github.com/reinsdev/reins/internal/agenthome"
)

// TestReadmeAgentFiles: the README's agent examples are exactly what
// `reins agents add NAME` writes (whose files internal/subagent/acpchild's
// TestAgentsAddFileRuns runs verbatim), so they work as shown; and no
// README agent file makes an agent's own config in the home writable.
func TestReadmeAgentFiles(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)`reins agents add ([a-z]+)`:\n```markdown\n(.*?)```").FindAllSubmatch(b, -1)
	if len(blocks) < 3 {
		t.Fatalf("README: %d `reins agents add NAME` examples, want claude, codex and gemini", len(blocks))
	}
	for _, m := range blocks {
		a, ok := agenthome.ByName(string(m[1]))
		if !ok {
			t.Errorf("README: reins agents add %s: no such known agent", m[1])
			continue
		}
		if string(m[2]) != a.File {
			t.Errorf("README's %s example is not what reins agents add %s writes:\n%s\nwant:\n%s", m[1], m[1], m[2], a.File)
		}
	}
	for _, bad := range []string{"--experimental-acp", "writable: [~/.claude", "writable: [~/.codex", "writable: [~/.gemini", "writable: [~/.pi"} {
		if regexp.MustCompile(regexp.QuoteMeta(bad)).Match(b) {
			t.Errorf("README still shows %q", bad)
		}
	}
}
