package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInteractiveCustomCommands (issue 51): Tab completes a custom
// command, /NAME ARGS runs it as a turn shown as typed, /skills lists the
// skills and /NAME runs a skill as a command.
func TestInteractiveCustomCommands(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: "Review main.go REVIEW-MARK"
    text: "REVIEWED."
  - match: "TIDY-BODY"
    text: "TIDIED."
`)
	home, cwd := t.TempDir(), t.TempDir()
	for name, body := range map[string]string{
		"commands/review.md":   "---\ndescription: review a file\nargument-hint: FILE\n---\nReview $1 REVIEW-MARK",
		"skills/tidy/SKILL.md": "---\nname: tidy\ndescription: Tidy the imports.\n---\nTIDY-BODY",
	} {
		p := filepath.Join(home, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tm, wait := startTerm(t, home, []string{"NO_COLOR=1", "TERM=xterm-256color"}, "--cwd", cwd, "-m", "openai/test", "--base-url", url)
	tm.waitFor("new session")
	// Tab completes in the same update that reads it, so the keys after
	// it land behind the completion; the screen is not waited on (the
	// renderer redraws only the cells that changed, so "/review " need
	// never be written whole).
	tm.typeKeys("/revi\t")
	tm.typeKeys("main.go\r")
	tm.waitFor("› /review main.go")
	tm.waitFor("REVIEWED.")
	tm.typeKeys("/skills\r")
	tm.waitFor("tidy (user) Tidy the imports.")
	tm.typeKeys("/tidy\r")
	tm.waitFor("TIDIED.")
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
	got := userPrompts(t, home)
	if len(got) != 2 || got[0] != "Review main.go REVIEW-MARK" || !strings.Contains(got[1], "TIDY-BODY") {
		t.Errorf("prompts: %q", got)
	}
}
