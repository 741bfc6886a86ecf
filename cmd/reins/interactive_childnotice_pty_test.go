package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInteractiveChildStartNotice (issue 48): an ACP child that dies while
// it starts shows, on the parent's screen, the last line it wrote on
// stderr (escaped) and the host log's path; the model is given only the
// fixed diagnostic (its next answer echoes what it got).
func TestInteractiveChildStartNotice(t *testing.T) {
	url, srv := startMock(t, `
replies:
  - match: DELEGATE-BOOM
    toolCalls:
      - {id: s1, name: subagent, arguments: {description: start boom, prompt: "go", agent: boom}}
  - match: "Subagent failure"
    text: "PARENT-SAW-FAILURE"
`)
	home, cwd := t.TempDir(), t.TempDir()
	agent := "---\nname: boom\ndescription: dies at start\nprovider: acp\ncommand: sh\n" +
		`args: ["-c", "printf 'boom: missing config \\033[31mred\\n' >&2; exit 1"]` + "\n---\n"
	if err := os.MkdirAll(filepath.Join(home, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "agents", "boom.md"), []byte(agent), 0o644); err != nil {
		t.Fatal(err)
	}
	tm, done := mockTerm(t, home, cwd, url, "--yes")
	tm.typeKeys("DELEGATE-BOOM\r")
	tm.waitFor(`its stderr said: boom: missing config \x1b[31mred`)
	tm.waitFor("PARENT-SAW-FAILURE")
	if !strings.Contains(tm.text(), filepath.Join("logs", "reins.log")) {
		t.Errorf("the host log is not named; screen:\n%s", tm.text())
	}
	for i := range srv.Count() {
		if rec, ok := srv.Request(i); ok && strings.Contains(string(rec.Body), "missing config") {
			t.Errorf("request %d carries the child's stderr", i)
		}
	}
	tm.typeKeys("\x04")
	if err := done(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
}
