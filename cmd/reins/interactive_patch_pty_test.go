package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestInteractiveApprovalPatchDiff (issue 35): an apply_patch call of an
// OpenAI model (the codex profile) asks with the diff of each file it
// touches against the file as it is, a header per file, the removed
// lines included, and not the raw patch text; nothing is written before
// the answer, and y applies it.
func TestInteractiveApprovalPatchDiff(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: PATCH-IT
    toolCalls:
      - {id: p1, name: apply_patch, arguments: {input: "*** Begin Patch\n*** Update File: greet.md\n@@\n hello\n-old line\n+new line\n*** Add File: notes/todo.md\n+first task\n*** End Patch\n"}}
  - match: "Success. Updated"
    text: "patched."
`)
	home, cwd := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "greet.md"), []byte("hello\nold line\nbye\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tm, wait := startTerm(t, home, []string{"NO_COLOR=1", "TERM=xterm-256color"}, "--cwd", cwd, "-m", "openai/gpt-5", "--base-url", url)
	tm.waitFor("new session")
	tm.typeKeys("PATCH-IT\r")
	tm.waitFor("? allow apply_patch (2 files)")
	tm.waitFor("greet.md: update")
	tm.waitFor("- old line")
	tm.waitFor("+ new line")
	tm.waitFor("notes/todo.md: add")
	tm.waitFor("+ first task")
	tm.waitFor("[y] once")
	if b, _ := os.ReadFile(filepath.Join(cwd, "greet.md")); string(b) != "hello\nold line\nbye\n" {
		t.Fatalf("written before the answer: %q", b)
	}
	if _, err := os.Stat(filepath.Join(cwd, "notes", "todo.md")); err == nil {
		t.Fatal("notes/todo.md added before the answer")
	}
	tm.typeKeys("y")
	tm.waitFor("patched.")
	if b, _ := os.ReadFile(filepath.Join(cwd, "greet.md")); string(b) != "hello\nnew line\nbye\n" {
		t.Errorf("greet.md after y: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(cwd, "notes", "todo.md")); string(b) != "first task\n" {
		t.Errorf("notes/todo.md after y: %q", b)
	}
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
}
