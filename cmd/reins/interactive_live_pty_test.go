package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/testutil"
)

// TestInteractiveLiveChild (issue 30 item 6): an ACP child (the official
// TypeScript SDK's agent side) announces a tool call and then holds it
// until a file exists; the file is created only once the call shows in
// the child's row on the parent's screen, so the row showed it while the
// child ran (event-derived: the child cannot end before the test lets it).
func TestInteractiveLiveChild(t *testing.T) {
	nm := testutil.Peers(t)
	url, _ := startMock(t, `
replies:
  - match: DELEGATE-ACP
    toolCalls:
      - {id: s1, name: subagent, arguments: {description: run the suite, prompt: "go", agent: acpkid}}
  - match: "tests passed"
    text: "CHILD-REPORTED"
`)
	home, cwd := t.TempDir(), t.TempDir()
	wait := filepath.Join(cwd, "go-on.flag")
	mark := testutil.MarkChildren(t)
	mk, mv, _ := strings.Cut(mark, "=")
	agent := "---\nname: acpkid\ndescription: an ACP child\nprovider: acp\ncommand: node\nargs: [" +
		filepath.Join(testutil.RepoRoot(t), "internal", "subagent", "acpchild", "testdata", "child.mjs") + "]\nenv:\n" +
		"  ACP_SDK_PATH: " + filepath.Join(nm, "@agentclientprotocol", "sdk", "dist", "v1", "stable", "acp.js") + "\n" +
		"  ACP_SCENARIO: tool_wait\n  ACP_WAIT_FILE: " + wait + "\n  " + mk + ": " + mv + "\n---\n"
	if err := os.MkdirAll(filepath.Join(home, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "agents", "acpkid.md"), []byte(agent), 0o644); err != nil {
		t.Fatal(err)
	}
	tm, done := mockTerm(t, home, cwd, url, "--yes")
	tm.typeKeys("DELEGATE-ACP\r")
	tm.waitFor("acpkid (acp) run the suite  running")
	tm.waitFor("⋯ execute")
	if strings.Contains(tm.text(), "CHILD-REPORTED") {
		t.Fatal("the child ended before the test let it")
	}
	if err := os.WriteFile(wait, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tm.waitFor("CHILD-REPORTED")
	tm.waitFor("acpkid (acp) run the suite  completed")
	tm.typeKeys("\x04")
	if err := done(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
}
