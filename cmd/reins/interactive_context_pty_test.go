package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInteractiveAtPath (issue 30 item 3): on a real terminal, `@ma` and
// Tab complete to the one workspace file that matches and that the
// .gitignore does not hide, and on send its content (a planted marker)
// reaches the model after the text typed; an @path outside the workspace
// is refused and its content never sent.
func TestInteractiveAtPath(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: MANUAL-MARKER-7
    text: "saw the manual."
  - match: OUTSIDE-TRY
    text: "no file."
`)
	home, cwd := t.TempDir(), t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.txt")
	for p, body := range map[string]string{
		".git/HEAD":     "ref: refs/heads/main\n",
		".gitignore":    "mangled.txt\n",
		"mangled.txt":   "IGNORED-CONTENT\n",
		"src/manual.md": "# Manual\nMANUAL-MARKER-7\n",
		"other.txt":     "other\n",
	} {
		full := filepath.Join(cwd, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(outside, []byte("OUTSIDE-SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tm, wait := mockTerm(t, home, cwd, url)
	// @'s list comes up as the name is typed (its files are walked in the
	// background): Tab takes its row only once it is up.
	tm.typeKeys("summarize @ma")
	tm.waitFor("Tab takes it")
	tm.typeKeys("\t")
	tm.waitFor("summarize @src/manual.md") // the completed name in the editor
	tm.typeKeys("please\r")
	tm.waitFor("@src/manual.md attached (")
	tm.waitFor("saw the manual.")

	tm.typeKeys("OUTSIDE-TRY @" + outside + "\r")
	tm.waitFor("not attached, it is outside the workspace")
	tm.waitFor("no file.")
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
	got := userPrompts(t, home)
	if len(got) != 2 {
		t.Fatalf("prompts: %q", got)
	}
	if !strings.HasPrefix(got[0], "summarize @src/manual.md please") || !strings.Contains(got[0], "<file path=\"src/manual.md\">\n# Manual\nMANUAL-MARKER-7\n") {
		t.Errorf("the first prompt lacks the file:\n%s", got[0])
	}
	if strings.Contains(got[0], "IGNORED-CONTENT") || strings.Contains(got[1], "OUTSIDE-SECRET") {
		t.Errorf("an ignored or outside file was sent: %q", got)
	}
}

// TestInteractiveShell (issue 30 item 3): `!ls` runs in the workspace,
// its output (a planted file name) shows on the screen and reaches the
// model with the next prompt, once.
func TestInteractiveShell(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: PLANTED-NAME-42.txt
    text: "saw the listing."
  - match: AGAIN
    text: "plain prompt."
`)
	home, cwd := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "PLANTED-NAME-42.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tm, wait := mockTerm(t, home, cwd, url)
	tm.typeKeys("!ls\r")
	tm.waitFor("PLANTED-NAME-42.txt")
	tm.waitFor("(this output goes with your next prompt)")
	tm.typeKeys("what is here?\r")
	tm.waitFor("saw the listing.")
	tm.typeKeys("AGAIN\r")
	tm.waitFor("plain prompt.")
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
	got := userPrompts(t, home)
	if len(got) != 2 || !strings.HasPrefix(got[0], "what is here?\n\n<shell command=\"ls\">\nPLANTED-NAME-42.txt\n") || got[1] != "AGAIN" {
		t.Errorf("prompts the model got: %q", got)
	}
}

// TestInteractiveAtListAsYouType (issue 48): typing @t opens the list of
// files without a Tab, two.txt (its name starts with t) before md.txt;
// Tab takes the first and the prompt sends with it attached.
func TestInteractiveAtListAsYouType(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: TWO-BODY-5
    text: "saw two."
`)
	home, cwd := t.TempDir(), t.TempDir()
	for _, f := range []string{"md.txt", "two.txt"} {
		if err := os.WriteFile(filepath.Join(cwd, f), []byte(strings.ToUpper(strings.TrimSuffix(f, ".txt"))+"-BODY-5\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tm, wait := mockTerm(t, home, cwd, url)
	tm.typeKeys("read @t")
	tm.waitFor("Tab takes it")
	out := tm.text()
	if i, j := strings.LastIndex(out, "› @two.txt"), strings.LastIndex(out, "@md.txt"); i < 0 || j < i {
		t.Fatalf("@t's list does not put two.txt first:\n%s", out)
	}
	tm.typeKeys("\t")
	tm.waitFor("read @two.txt")
	tm.typeKeys("\r")
	tm.waitFor("@two.txt attached (")
	tm.waitFor("saw two.")
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
}

// TestInteractiveCtrlCTwice (issue 48 "Why" 12): the first Ctrl-C at an
// empty prompt says a second one exits; the second exits 0.
func TestInteractiveCtrlCTwice(t *testing.T) {
	url, _ := startMock(t, `
fallback:
  text: "fine"
`)
	tm, wait := startTerm(t, t.TempDir(), []string{"NO_COLOR=1", "TERM=xterm-256color"}, "--cwd", t.TempDir(), "-m", "openai/test", "--base-url", url)
	tm.waitFor("new session")
	tm.waitIdle()
	tm.typeKeys("\x03")
	tm.waitFor("press Ctrl-C again to exit")
	tm.typeKeys("\x03")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
}
