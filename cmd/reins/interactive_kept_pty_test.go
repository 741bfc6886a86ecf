package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/testutil"
)

// TestInteractiveJobsKeptChild (issue 48): an ACP child kept alive for a
// continuation after its run is listed by /jobs, with how long it has
// idled, when it stops, and its process tree's resident memory.
func TestInteractiveJobsKeptChild(t *testing.T) {
	nm := testutil.Peers(t)
	url, _ := startMock(t, `
replies:
  - match: DELEGATE-ACP
    toolCalls:
      - {id: s1, name: subagent, arguments: {description: say hello, prompt: "go", agent: acpkid}}
  - match: "Hello"
    text: "CHILD-DONE"
`)
	home, cwd := t.TempDir(), t.TempDir()
	mark := testutil.MarkChildren(t)
	mk, mv, _ := strings.Cut(mark, "=")
	agent := "---\nname: acpkid\ndescription: an ACP child\nprovider: acp\ncommand: node\nargs: [" +
		filepath.Join(testutil.RepoRoot(t), "internal", "subagent", "acpchild", "testdata", "child.mjs") + "]\nenv:\n" +
		"  ACP_SDK_PATH: " + filepath.Join(nm, "@agentclientprotocol", "sdk", "dist", "v1", "stable", "acp.js") + "\n" +
		"  " + mk + ": " + mv + "\n---\n"
	if err := os.MkdirAll(filepath.Join(home, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "agents", "acpkid.md"), []byte(agent), 0o644); err != nil {
		t.Fatal(err)
	}
	tm, done := mockTerm(t, home, cwd, url, "--yes")
	tm.typeKeys("DELEGATE-ACP\r")
	tm.waitFor("CHILD-DONE")
	tm.typeKeys("/jobs\r")
	tm.waitFor("kept children (idle until continued; stopped after subagents.idleTimeout):")
	tm.waitFor("acpkid (acp)  idle ")
	tm.waitFor(" MB resident")
	tm.typeKeys("\x04")
	if err := done(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
}

// TestInteractiveJobsKeptReinsChild: a reins child kept for a
// continuation shows its process tree's memory in /jobs, as an ACP
// child's does.
func TestInteractiveJobsKeptReinsChild(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: DELEGATE-REINS
    toolCalls:
      - {id: s1, name: subagent, arguments: {description: say hello, prompt: "go", agent: rkid}}
  - match: KID-REPLY
    text: "PARENT-DONE"
fallback:
  text: "KID-REPLY"
`)
	home, cwd := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "agents", "rkid.md"), []byte("---\nname: rkid\ndescription: a reins child\nprovider: reins\n---\nYou help.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tm, done := mockTerm(t, home, cwd, url, "--yes")
	tm.typeKeys("DELEGATE-REINS\r")
	tm.waitFor("PARENT-DONE")
	tm.waitIdle()
	tm.typeKeys("/jobs\r")
	tm.waitFor("kept children (idle until continued; stopped after subagents.idleTimeout):")
	tm.waitFor("rkid (reins)  idle ")
	tm.waitFor(" MB resident")
	tm.typeKeys("\x04")
	if err := done(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
}
