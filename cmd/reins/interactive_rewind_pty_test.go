package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// Issue 48 item 1: /rewind works on the running session only and never
// loses the user's work. Each test drives the real binary on a pty
// against the mock model.

// waitForAny waits (generously) until the screen shows one of ss, and
// returns it: a test sees the old behaviour at once instead of waiting
// out the deadline for the new one.
func (tm *ptyTerm) waitForAny(ss ...string) string {
	tm.t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		text := tm.text()
		for _, s := range ss {
			if strings.Contains(text, s) {
				return s
			}
		}
	}
	tm.t.Fatalf("the screen never showed any of %q; it showed:\n%s", ss, tm.text())
	return ""
}

// waitForCount waits (generously) until the screen shows s n times.
func (tm *ptyTerm) waitForCount(s string, n int) {
	tm.t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Count(tm.text(), s) >= n {
			return
		}
	}
	tm.t.Fatalf("the screen never showed %q %d times; it showed:\n%s", s, n, tm.text())
}

// answerUntil types key every second until the output shows s (at most
// 60 times): a question armed after it showed ignores keys typed before.
func (tm *ptyTerm) answerUntil(key, s string) {
	tm.t.Helper()
	for range 60 {
		tm.typeKeys(key)
		for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if strings.Contains(tm.text(), s) {
				return
			}
		}
	}
	tm.t.Fatalf("the screen never showed %q; it showed:\n%s", s, tm.text())
}

// after is the screen's text after the last s.
func (tm *ptyTerm) after(s string) string {
	text := tm.text()
	return text[strings.LastIndex(text, s)+len(s):]
}

// forks are the session logs under home: the forks (ForkOf set) and the
// first prompt of each session by id.
func forks(t *testing.T, home string) (forks []*session.Loaded, first map[string]string) {
	t.Helper()
	first = map[string]string{}
	paths, _ := filepath.Glob(filepath.Join(home, "sessions", "*", session.FileName))
	for _, p := range paths {
		ld, err := session.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if ld.Header.ParentSession != "" {
			continue
		}
		if ld.Header.ForkOf != "" {
			forks = append(forks, ld)
		}
		// The first prompt the user sent (reins's own notices to the
		// model about the session's modes come before it).
		for _, e := range ld.Events {
			var u session.UserMessage
			if e.Type == session.TypeUserMessage && e.Decode(&u) == nil && u.Notice == "" && first[ld.Header.ID] == "" {
				first[ld.Header.ID] = string(e.Data)
			}
		}
	}
	return forks, first
}

// TestInteractiveRewindKeepsUserFile (issue 48 (a)): `alpha` writes a.txt,
// the user makes u.txt by hand, `beta` writes b.txt; /rewind 1 lists
// a.txt and b.txt to restore and u.txt to leave, and asks; y restores
// the two and u.txt stays, named as left.
func TestInteractiveRewindKeepsUserFile(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: ALPHA-PROMPT
    toolCalls:
      - {id: w1, name: write, arguments: {path: a.txt, content: "alpha\n"}}
  - match: "to a.txt"
    text: "ALPHA-DONE"
  - match: BETA-PROMPT
    toolCalls:
      - {id: w2, name: write, arguments: {path: b.txt, content: "beta\n"}}
  - match: "to b.txt"
    text: "BETA-DONE"
`)
	home, cwd := t.TempDir(), t.TempDir()
	testutil.Git(t, cwd, "init", "-q")
	tm, done := mockTerm(t, home, cwd, url, "--yes")
	tm.typeKeys("ALPHA-PROMPT\r")
	tm.waitFor("ALPHA-DONE")
	tm.waitIdle()
	user := "made by hand\n"
	if err := os.WriteFile(filepath.Join(cwd, "u.txt"), []byte(user), 0o644); err != nil {
		t.Fatal(err)
	}
	tm.typeKeys("BETA-PROMPT\r")
	tm.waitFor("BETA-DONE")
	tm.waitIdle()
	tm.typeKeys("/rewind 1\r")
	tm.waitForAny("[y/N]", "/rewind: files as they were")
	if got := readOr(t, filepath.Join(cwd, "u.txt")); got != user {
		t.Fatalf("/rewind 1 touched the user's u.txt before any question: %q; screen:\n%s", got, tm.text())
	}
	plan := tm.after("/rewind 1 goes back")
	for _, want := range []string{"restore a.txt", "restore b.txt", "leave   u.txt"} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan does not say %q:\n%s", want, plan)
		}
	}
	tm.typeKeys("y")
	tm.waitFor("/rewind: files as they were")
	if !strings.Contains(tm.after("/rewind: files as they were"), "left as they are, changed outside reins's turns: u.txt") {
		t.Errorf("the report does not name u.txt as left:\n%s", tm.text())
	}
	tm.typeKeys("\x03\x04")
	if err := done(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
	if got := readOr(t, filepath.Join(cwd, "u.txt")); got != user {
		t.Errorf("u.txt = %q, want the user's %q", got, user)
	}
	for _, f := range []string{"a.txt", "b.txt"} {
		if got := readOr(t, filepath.Join(cwd, f)); got != "<absent>" {
			t.Errorf("%s (a turn made it) = %q after /rewind 1", f, got)
		}
	}
}

// TestInteractiveRewindKeepsUserEdit (issue 48 (b)): a file reins made
// that the user then edited is listed as left and not touched: Enter
// keeps everything (the default), and y forks but leaves the file — in
// git (the snapshots) and outside it (the before-images).
func TestInteractiveRewindKeepsUserEdit(t *testing.T) {
	for _, inGit := range []bool{true, false} {
		name := "nogit"
		if inGit {
			name = "git"
		}
		t.Run(name, func(t *testing.T) {
			url, _ := startMock(t, `
replies:
  - match: MAKE-PROMPT
    toolCalls:
      - {id: w1, name: write, arguments: {path: a.txt, content: "made by reins\n"}}
  - match: "to a.txt"
    text: "MAKE-DONE"
`)
			home, cwd := t.TempDir(), t.TempDir()
			if inGit {
				testutil.Git(t, cwd, "init", "-q")
			}
			tm, done := mockTerm(t, home, cwd, url, "--yes")
			tm.typeKeys("MAKE-PROMPT\r")
			tm.waitFor("MAKE-DONE")
			tm.waitIdle()
			edited := "made by reins\nand edited by the user\n"
			if err := os.WriteFile(filepath.Join(cwd, "a.txt"), []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			tm.typeKeys("/rewind 1\r")
			tm.waitForAny("[y/N]", "/rewind: files as they were")
			if got := readOr(t, filepath.Join(cwd, "a.txt")); got != edited {
				t.Fatalf("/rewind 1 touched the user's edit without a question: %q; screen:\n%s", got, tm.text())
			}
			if plan := tm.after("/rewind 1 goes back"); !strings.Contains(plan, "leave   a.txt") || strings.Contains(plan, "restore a.txt") {
				t.Errorf("the plan does not list a.txt as left:\n%s", plan)
			}
			tm.typeKeys("\r") // Enter: the default keeps everything
			tm.waitFor("kept everything")
			if strings.Contains(tm.text(), "/rewind: files as they were") {
				t.Error("Enter forked the session")
			}
			tm.typeKeys("/rewind 1\r")
			// The plan is printed whole; the question below it is redrawn
			// only where it differs from the first one's cells, so it is
			// not waited on: y is typed until the question, once armed,
			// takes it (a y before that is no answer).
			tm.waitForCount("/rewind 1 goes back", 2)
			tm.answerUntil("y", "/rewind: files as they were")
			if !strings.Contains(tm.after("/rewind: files as they were"), "left as they are, changed outside reins's turns: a.txt") {
				t.Errorf("the report does not name a.txt as left:\n%s", tm.text())
			}
			tm.typeKeys("\x03\x04")
			if err := done(); err != nil {
				t.Fatalf("exit %v; screen:\n%s", err, tm.text())
			}
			if got := readOr(t, filepath.Join(cwd, "a.txt")); got != edited {
				t.Errorf("a.txt = %q, want the user's edit", got)
			}
		})
	}
}

// TestInteractiveRewindAfterNew (issue 48 (c)): after /new, /rewind lists
// the new session's prompts only, and /rewind 1 forks the new session.
func TestInteractiveRewindAfterNew(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: ONE-PROMPT
    text: "ONE-DONE"
  - match: TWO-PROMPT
    text: "TWO-DONE"
`)
	home, cwd := t.TempDir(), t.TempDir()
	tm, done := mockTerm(t, home, cwd, url, "--yes")
	tm.typeKeys("ONE-PROMPT\r")
	tm.waitFor("ONE-DONE")
	tm.waitIdle()
	tm.typeKeys("/new\r")
	tm.waitForCount("new session", 2)
	tm.typeKeys("/rewind\r")
	if got := tm.waitForAny("/rewind: no earlier prompt of this session", "/rewind N goes back"); got != "/rewind: no earlier prompt of this session" {
		t.Fatalf("/rewind right after /new lists the earlier session's prompts:\n%s", tm.after("/new"))
	}
	tm.typeKeys("TWO-PROMPT\r")
	tm.waitFor("TWO-DONE")
	tm.waitIdle()
	tm.typeKeys("/rewind\r")
	tm.waitFor("/rewind N goes back")
	tm.waitFor(" 1  TWO-PROMPT")
	if list := tm.after("/rewind N goes back"); strings.Contains(list, "ONE-PROMPT") || strings.Contains(list, " 2  ") {
		t.Errorf("/rewind lists another session's prompts:\n%s", list)
	}
	tm.typeKeys("/rewind 1\r")
	tm.waitForAny("[y/N]", "/rewind: files as they were")
	tm.typeKeys("y")
	tm.waitFor("/rewind: files as they were")
	tm.typeKeys("\x03\x04")
	if err := done(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
	fs, first := forks(t, home)
	if len(fs) != 1 || !strings.Contains(first[fs[0].Header.ForkOf], "TWO-PROMPT") {
		t.Errorf("/rewind 1 after /new forked %d sessions (want 1, of the session TWO-PROMPT began): %v", len(fs), first)
	}
}

// TestInteractiveRewindAfterResume (issue 48 (d)): after /resume of
// another session, /rewind 2 goes back within the resumed session and
// never restores (or removes) a file of the session before it.
func TestInteractiveRewindAfterResume(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: ALPHA-ONE
    toolCalls:
      - {id: w1, name: write, arguments: {path: a1.txt, content: "a1\n"}}
  - match: "to a1.txt"
    text: "A1-DONE"
  - match: BRAVO-ONE
    toolCalls:
      - {id: w2, name: write, arguments: {path: b1.txt, content: "b1\n"}}
  - match: "to b1.txt"
    text: "B1-DONE"
  - match: ALPHA-TWO
    toolCalls:
      - {id: w3, name: write, arguments: {path: a2.txt, content: "a2\n"}}
  - match: "to a2.txt"
    text: "A2-DONE"
  - match: ALPHA-THREE
    toolCalls:
      - {id: w4, name: write, arguments: {path: a3.txt, content: "a3\n"}}
  - match: "to a3.txt"
    text: "A3-DONE"
`)
	home, cwd := t.TempDir(), t.TempDir()
	testutil.Git(t, cwd, "init", "-q")
	tm, done := mockTerm(t, home, cwd, url, "--yes")
	for _, p := range [][2]string{{"ALPHA-ONE about zebras", "A1-DONE"}, {"/new", ""}, {"BRAVO-ONE", "B1-DONE"},
		{"/resume zebras", "resumed session"}, {"ALPHA-TWO", "A2-DONE"}, {"ALPHA-THREE", "A3-DONE"}} {
		tm.typeKeys(p[0] + "\r")
		if p[1] == "" {
			tm.waitForCount("new session", 2)
			continue
		}
		tm.waitFor(p[1])
		tm.waitIdle()
	}
	tm.typeKeys("/rewind 2\r")
	tm.waitForAny("[y/N]", "/rewind: files as they were")
	if got := readOr(t, filepath.Join(cwd, "b1.txt")); got != "b1\n" {
		t.Fatalf("/rewind 2 after /resume touched the other session's b1.txt: %q; screen:\n%s", got, tm.text())
	}
	plan := tm.after("/rewind 2 goes back")
	if !strings.Contains(plan, "“ALPHA-THREE”") || !strings.Contains(plan, "restore a3.txt") || strings.Contains(plan, "b1.txt") || strings.Contains(plan, "a2.txt") {
		t.Errorf("the plan of /rewind 2:\n%s", plan)
	}
	tm.typeKeys("y")
	tm.waitFor("/rewind: files as they were")
	tm.typeKeys("\x03\x04")
	if err := done(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
	for f, want := range map[string]string{"a1.txt": "a1\n", "b1.txt": "b1\n", "a2.txt": "a2\n", "a3.txt": "<absent>"} {
		if got := readOr(t, filepath.Join(cwd, f)); got != want {
			t.Errorf("%s = %q, want %q", f, got, want)
		}
	}
	fs, first := forks(t, home)
	if len(fs) != 1 || !strings.Contains(first[fs[0].Header.ForkOf], "ALPHA-ONE") {
		t.Errorf("/rewind 2 after /resume forked %d sessions (want 1, of the session ALPHA-ONE began): %v", len(fs), first)
	}
}
