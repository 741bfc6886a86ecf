package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInteractiveRules (issue 30 item 7): on a real terminal against the
// mock model, with config `permissions:` rules: an allowed bash command
// runs without a question; a denied one is refused without one, and the
// model gets the refusal naming the rule; [a] on a question adds the
// narrowest rule (said on the screen) and the same call later is not
// asked; [n] takes an instruction that reaches the model with the refusal.
func TestInteractiveRules(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: ALLOWED-RUN
    toolCalls:
      - {id: b1, name: bash, arguments: {command: "printf 'ALLOWED-%s\\n' OUTPUT"}}
  - match: ALLOWED-OUTPUT
    text: "allowed ran."
  - match: DENIED-RUN
    toolCalls:
      - {id: b2, name: bash, arguments: {command: "rm -f keep.txt"}}
  - match: "denied by the permission rule bash(rm:*)"
    text: "deny seen."
  - match: ALWAYS-RUN
    toolCalls:
      - {id: b3, name: bash, arguments: {command: "echo TOUCH > touched.txt; echo TOUCH-DONE"}}
  - match: TOUCH-DONE
    text: "touched once."
  - match: ALWAYS-AGAIN
    toolCalls:
      - {id: b4, name: bash, arguments: {command: "echo TOUCH > touched.txt; echo TOUCH-DONE"}}
  - match: TOUCH-DONE
    text: "touched twice."
  - match: REJECT-RUN
    toolCalls:
      - {id: b5, name: bash, arguments: {command: "echo NOPE"}}
  - match: "The user says instead: use the ls tool instead"
    text: "instruction seen."
`)
	home, cwd := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("permissions:\n  allow: ['bash(printf:*)']\n  deny: ['bash(rm:*)']\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, "keep.txt"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tm, wait := mockTerm(t, home, cwd, url)
	since := func(off int) string { return tm.text()[off:] }

	tm.typeKeys("ALLOWED-RUN\r")
	tm.waitFor("allowed ran.")
	if strings.Contains(tm.text(), "? allow bash") {
		t.Fatalf("the allowed command asked:\n%s", tm.text())
	}

	off := len(tm.text())
	tm.typeKeys("DENIED-RUN\r")
	tm.waitFor("deny seen.")
	if s := since(off); strings.Contains(s, "? allow bash") || !strings.Contains(s, "denied by the permission rule bash(rm:*)") {
		t.Fatalf("the denied command:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(cwd, "keep.txt")); err != nil {
		t.Fatalf("the denied rm ran: %v", err)
	}

	off = len(tm.text())
	tm.typeKeys("ALWAYS-RUN\r")
	tm.waitFor("[a] always allow bash(echo TOUCH > touched.txt; echo TOUCH-DONE)")
	tm.typeKeys("a")
	waitAfter(tm, off, "rule bash(echo TOUCH > touched.txt; echo TOUCH-DONE) added for this session")
	tm.waitFor("touched once.")
	off = len(tm.text())
	tm.typeKeys("ALWAYS-AGAIN\r")
	tm.waitFor("touched twice.")
	if s := since(off); strings.Contains(s, "? allow bash") {
		t.Fatalf("the call allowed with [a] asked again:\n%s", s)
	}

	off = len(tm.text())
	tm.typeKeys("REJECT-RUN\r")
	waitAfter(tm, off, "[a] always allow bash(echo NOPE)")
	tm.typeKeys("n")
	tm.waitFor("what should it do instead?")
	tm.typeKeys("use the ls tool instead\r")
	tm.waitFor("instruction seen.")
	tm.waitFor("rejected, with your instruction: use the ls tool instead")

	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
}

// waitAfter waits (generously) until the screen's text after its first
// off bytes shows s: a line an earlier step drew does not count.
func waitAfter(tm *ptyTerm, off int, s string) {
	tm.t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if t := tm.text(); len(t) >= off && strings.Contains(t[off:], s) {
			return
		}
	}
	tm.t.Fatalf("the screen never showed %q after offset %d; it showed:\n%s", s, off, tm.text())
}
