package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInteractiveInit (issue 30 item 8): /init sends the model the fixed
// drafting prompt (shown as /init); the model's write of AGENTS.md asks
// with its diff, and nothing is written before the answer.
func TestInteractiveInit(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: "Draft this repository's AGENTS.md"
    toolCalls:
      - {id: w1, name: write, arguments: {path: AGENTS.md, content: "# Agents\nrun go test ./...\n"}}
  - match: "to AGENTS.md"
    text: "DRAFTED."
`)
	home, cwd := t.TempDir(), t.TempDir()
	tm, wait := mockTerm(t, home, cwd, url)
	tm.typeKeys("/init\r")
	tm.waitFor("› /init")
	tm.waitFor("? allow write AGENTS.md")
	tm.waitFor("+ run go test ./...")
	if _, err := os.Stat(filepath.Join(cwd, "AGENTS.md")); !os.IsNotExist(err) {
		t.Fatalf("AGENTS.md written before the answer: %v", err)
	}
	tm.typeKeys("y")
	tm.waitFor("DRAFTED.")
	if b, _ := os.ReadFile(filepath.Join(cwd, "AGENTS.md")); string(b) != "# Agents\nrun go test ./...\n" {
		t.Fatalf("AGENTS.md: %q", b)
	}
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
	if got := userPrompts(t, home); len(got) != 1 || !strings.HasPrefix(got[0], "Draft this repository's AGENTS.md") {
		t.Errorf("prompts: %q", got)
	}
}
