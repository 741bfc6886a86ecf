package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// readOr is a file's content, or "<absent>".
func readOr(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestInteractiveUndoGit (issue 30 item 7): in a git repository a turn
// edits a file, writes a new one and deletes a committed one with bash;
// /undo puts all three back byte for byte (the deleted file from the
// snapshot of the working tree taken before the turn), and the user's
// index, HEAD and branches are as they were.
func TestInteractiveUndoGit(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: CHANGE-IT
    toolCalls:
      - {id: e1, name: edit, arguments: {path: edit.txt, old_string: "old line", new_string: "new line"}}
      - {id: w1, name: write, arguments: {path: made.txt, content: "made by the model\n"}}
      - {id: b1, name: bash, arguments: {command: "rm keep.txt && echo BASH-DONE"}}
  - match: BASH-DONE
    text: "CHANGED-ALL"
`)
	home, cwd := t.TempDir(), t.TempDir()
	testutil.Git(t, cwd, "init", "-q")
	edit, keep := "first\nold line\nlast\x00\n", "keep me\r\nexactly"
	os.WriteFile(filepath.Join(cwd, "edit.txt"), []byte(edit), 0o644)
	os.WriteFile(filepath.Join(cwd, "keep.txt"), []byte(keep), 0o600)
	testutil.Git(t, cwd, "add", "-A")
	testutil.Git(t, cwd, "commit", "-qm", "init")
	index := readOr(t, filepath.Join(cwd, ".git", "index"))
	head := testutil.Git(t, cwd, "rev-parse", "HEAD")

	tm, done := mockTerm(t, home, cwd, url, "--yes")
	tm.typeKeys("CHANGE-IT\r")
	tm.waitFor("CHANGED-ALL")
	tm.waitIdle()
	if readOr(t, filepath.Join(cwd, "keep.txt")) != "<absent>" || !strings.Contains(readOr(t, filepath.Join(cwd, "edit.txt")), "new line") {
		t.Fatal("the turn did not change the files")
	}
	tm.typeKeys("/undo\r")
	tm.waitFor("restored 3 files")
	tm.typeKeys("\x04")
	if err := done(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
	if got := readOr(t, filepath.Join(cwd, "edit.txt")); got != edit {
		t.Errorf("edit.txt = %q, want %q", got, edit)
	}
	if got := readOr(t, filepath.Join(cwd, "keep.txt")); got != keep {
		t.Errorf("keep.txt (bash deleted it) = %q, want %q", got, keep)
	}
	if fi, err := os.Stat(filepath.Join(cwd, "keep.txt")); err == nil && fi.Mode().Perm() != 0o644 && fi.Mode().Perm() != 0o600 {
		t.Errorf("keep.txt mode %v", fi.Mode())
	}
	if got := readOr(t, filepath.Join(cwd, "made.txt")); got != "<absent>" {
		t.Errorf("made.txt (the turn created it) = %q", got)
	}
	if readOr(t, filepath.Join(cwd, ".git", "index")) != index || testutil.Git(t, cwd, "rev-parse", "HEAD") != head {
		t.Error("the user's index or HEAD changed")
	}
	if st := testutil.Git(t, cwd, "status", "--porcelain"); st != "" {
		t.Errorf("git status after /undo: %q", st)
	}
	if br := testutil.Git(t, cwd, "branch", "--list"); strings.Count(br, "\n") != 1 {
		t.Errorf("branches: %q", br)
	}
}

// TestInteractiveUndoNoGit (issue 30 item 7): outside git the
// before-images the harness takes before write and edit restore an edited
// file and remove a written one.
func TestInteractiveUndoNoGit(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: CHANGE-IT
    toolCalls:
      - {id: e1, name: edit, arguments: {path: edit.txt, old_string: "old line", new_string: "new line"}}
      - {id: w1, name: write, arguments: {path: sub/made.txt, content: "made\n"}}
  - match: "made.txt"
    text: "CHANGED-ALL"
`)
	home, cwd := t.TempDir(), t.TempDir()
	edit := "first\nold line\nlast\n"
	os.WriteFile(filepath.Join(cwd, "edit.txt"), []byte(edit), 0o644)
	tm, done := mockTerm(t, home, cwd, url, "--yes")
	tm.typeKeys("CHANGE-IT\r")
	tm.waitFor("CHANGED-ALL")
	tm.waitIdle()
	tm.typeKeys("/undo\r")
	tm.waitFor("restored 2 files")
	tm.typeKeys("/undo\r")
	tm.waitFor("/undo: no turn of this session to undo")
	tm.typeKeys("\x04")
	if err := done(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
	if got := readOr(t, filepath.Join(cwd, "edit.txt")); got != edit {
		t.Errorf("edit.txt = %q, want %q", got, edit)
	}
	if got := readOr(t, filepath.Join(cwd, "sub", "made.txt")); got != "<absent>" {
		t.Errorf("sub/made.txt = %q", got)
	}
}

// TestInteractiveRewind (issue 30 item 7): two prompts each change a
// file; /rewind 2 goes back to before the second: its file changes are
// undone, the second prompt is back in the editor, and the conversation
// goes on as a new session whose log is a fork of the first (its turn 0
// the copied conversation, its header naming the original): the next
// request holds the first prompt but not the second.
func TestInteractiveRewind(t *testing.T) {
	url, srv := startMock(t, `
replies:
  - match: FIRST-PROMPT
    toolCalls:
      - {id: w1, name: write, arguments: {path: a.txt, content: "v1\n"}}
  - match: "to a.txt"
    text: "FIRST-DONE"
  - match: SECOND-PROMPT
    toolCalls:
      - {id: w2, name: write, arguments: {path: b.txt, content: "b\n"}}
      - {id: e2, name: edit, arguments: {path: a.txt, old_string: "v1", new_string: "v2"}}
  - match: "to b.txt"
    text: "SECOND-DONE"
  - match: THIRD-PROMPT
    text: "THIRD-DONE"
`)
	home, cwd := t.TempDir(), t.TempDir()
	tm, done := mockTerm(t, home, cwd, url, "--yes")
	tm.typeKeys("FIRST-PROMPT\r")
	tm.waitFor("FIRST-DONE")
	tm.typeKeys("SECOND-PROMPT\r")
	tm.waitFor("SECOND-DONE")
	tm.waitIdle()
	if readOr(t, filepath.Join(cwd, "a.txt")) != "v2\n" {
		t.Fatal("the second turn did not edit a.txt")
	}
	tm.typeKeys("/rewind\r")
	tm.waitFor(" 2  SECOND-PROMPT")
	tm.typeKeys("/rewind 2\r")
	tm.waitFor("[y/N]")
	tm.typeKeys("y")
	tm.waitFor("a fork of")
	if got := readOr(t, filepath.Join(cwd, "a.txt")); got != "v1\n" {
		t.Errorf("a.txt after /rewind 2 = %q", got)
	}
	if got := readOr(t, filepath.Join(cwd, "b.txt")); got != "<absent>" {
		t.Errorf("b.txt after /rewind 2 = %q", got)
	}
	tm.typeKeys("\x03") // the second prompt is back in the editor: clear it
	tm.typeKeys("THIRD-PROMPT\r")
	tm.waitFor("THIRD-DONE")
	tm.typeKeys("\x04")
	if err := done(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
	var third string
	for _, r := range srv.Requests() {
		if strings.Contains(string(r.Body), "THIRD-PROMPT") {
			third = string(r.Body)
		}
	}
	if !strings.Contains(third, "FIRST-PROMPT") || !strings.Contains(third, "FIRST-DONE") || strings.Contains(third, "SECOND") {
		t.Errorf("the request after /rewind 2 is not the first turn's history plus the new prompt:\n%s", third)
	}
	// Two sessions: the original, and the fork holding the copy.
	paths, _ := filepath.Glob(filepath.Join(home, "sessions", "*", session.FileName))
	var orig, fork *session.Loaded
	for _, p := range paths {
		ld, err := session.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if ld.Header.ParentSession != "" {
			continue
		}
		if ld.Header.ForkOf != "" {
			fork = ld
		} else {
			orig = ld
		}
	}
	if orig == nil || fork == nil || fork.Header.ForkOf != orig.Header.ID {
		t.Fatalf("no fork of the original session among %d logs", len(paths))
	}
	var copied, turn0 bool
	for _, e := range fork.Events {
		var d session.TurnStart
		if e.Type == session.TypeTurnStart && e.Decode(&d) == nil && d.Turn == 0 {
			turn0 = true
		}
		if e.Type == session.TypeUserMessage && strings.Contains(string(e.Data), "FIRST-PROMPT") {
			copied = turn0
		}
	}
	if !copied {
		t.Error("the fork's log does not start with the copied first turn (turn 0)")
	}
	if got := userPrompts(t, home); strings.Count(strings.Join(got, "|"), "SECOND-PROMPT") != 1 {
		t.Errorf("prompts in the logs: %q", got)
	}
}
