package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// overwriteScript overwrites greet.md (made by overwriteWorkspace) with
// 20 new lines: the change is 22 diff lines, 12 shown and 10 more.
func overwriteScript() string {
	var b strings.Builder
	b.WriteString("hello\\n")
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, "new %d\\n", i)
	}
	return `
replies:
  - match: OVERWRITE
    toolCalls:
      - {id: w1, name: write, arguments: {path: greet.md, content: "` + b.String() + `"}}
  - match: "to greet.md"
    text: "OVERWRITTEN"
`
}

func overwriteWorkspace(t *testing.T) string {
	t.Helper()
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "greet.md"), []byte("hello\nold line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return cwd
}

// TestRunShowsRemovedLines (issue 48 item 2): reins run's transcript on a
// terminal shows a write's change with its removed lines, capped with
// "… N more lines" (it showed only the call's summary).
func TestRunShowsRemovedLines(t *testing.T) {
	url, _ := startMock(t, overwriteScript())
	home, cwd := t.TempDir(), overwriteWorkspace(t)
	cmd := reinsCmd(t, home, "run", "--cwd", cwd, "-m", "openai/test", "--base-url", url, "OVERWRITE")
	errTTY, readErr := ptyOut(t)
	cmd.Stderr = errTTY
	cmd.Env = append(cmd.Env, "NO_COLOR=1")
	if err := cmd.Run(); err != nil {
		t.Fatalf("reins run: %v\nstderr %s", err, readErr())
	}
	stderr := readErr()
	for _, want := range []string{"      hello\n", "    - old line\n", "    + new 1\n", "    + new 10\n", "    … 10 more lines\n"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "new 11") {
		t.Errorf("the diff is not capped:\n%s", stderr)
	}
}

// TestInteractiveRemovedLinesEveryMode (issue 48 item 2): an overwrite
// nobody was asked about — auto-edit, --yes — shows its removed lines in
// the scrollback, capped, as an asked one does (it showed only the added
// lines).
func TestInteractiveRemovedLinesEveryMode(t *testing.T) {
	for _, mode := range []string{"auto-edit", "yes"} {
		t.Run(mode, func(t *testing.T) {
			url, _ := startMock(t, overwriteScript())
			home, cwd := t.TempDir(), overwriteWorkspace(t)
			args := []string{"--cwd", cwd, "-m", "openai/test", "--base-url", url}
			if mode == "yes" {
				args = append(args, "--yes")
			}
			tm, wait := startTerm(t, home, []string{"NO_COLOR=1", "TERM=xterm-256color"}, args...)
			tm.waitFor("new session")
			if mode == "auto-edit" {
				tm.typeKeys("\x1b[Z")
				tm.waitFor("· auto-edit")
			}
			tm.typeKeys("OVERWRITE\r")
			tm.waitFor("OVERWRITTEN")
			tm.waitFor("- old line")
			tm.waitFor("+ new 10")
			tm.waitFor("… 10 more lines")
			if strings.Contains(tm.text(), "new 11") {
				t.Errorf("the diff is not capped:\n%s", tm.text())
			}
			tm.typeKeys("\x04")
			if err := wait(); err != nil {
				t.Fatalf("exit %v; screen:\n%s", err, tm.text())
			}
		})
	}
}
