package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

// userPrompts are the user messages of the only root session under home.
func userPrompts(t *testing.T, home string) []string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(home, "sessions", "*", session.FileName))
	var out []string
	for _, p := range paths {
		ld, err := session.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if ld.Header.ParentSession != "" {
			continue
		}
		for _, e := range ld.Events {
			if e.Type != session.TypeUserMessage {
				continue
			}
			var d session.UserMessage
			if e.Decode(&d) == nil && d.Message.Role == llm.RoleUser && d.Notice == "" {
				out = append(out, llm.BlocksText(d.Message.Content))
			}
		}
	}
	return out
}

// TestInteractiveTypeAhead (issue 30 item 2): 50 keys and Enter typed
// the moment reins starts, before its first frame, then a second prompt
// right behind them: both arrive whole, in order, and each is sent as its
// own prompt (Enter never becomes a new line).
func TestInteractiveTypeAhead(t *testing.T) {
	first := "TYPEAHEAD-" + strings.Repeat("abcd", 10) // 50 keys
	url, _ := startMock(t, `
replies:
  - match: "`+first+`"
    text: "got the first"
  - match: SECOND-PROMPT
    text: "got the second"
`)
	home := t.TempDir()
	tm, wait := startTerm(t, home, []string{"NO_COLOR=1", "TERM=xterm-256color"}, "--cwd", t.TempDir(), "-m", "openai/test", "--base-url", url)
	tm.typeKeys(first + "\r" + "SECOND-PROMPT\r")
	tm.waitFor("got the first")
	tm.waitFor("got the second")
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
	if got := userPrompts(t, home); len(got) != 2 || got[0] != first || got[1] != "SECOND-PROMPT" {
		t.Errorf("prompts the model got: %q", got)
	}
}

// TestInteractiveApprovalDiff (issue 26 item 6, issue 30): a write over an
// existing file asks with the diff against it, the removed line included,
// before anything is written; a long bash command is shown whole, its
// tail too, with its escape character made visible.
func TestInteractiveApprovalDiff(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: WRITE-IT
    toolCalls:
      - {id: w1, name: write, arguments: {path: greet.md, content: "hello\nnew line\n"}}
  - match: "to greet.md"
    text: "written."
  - match: RUN-IT
    toolCalls:
      - {id: b1, name: bash, arguments: {command: "echo running: go test ./internal/... -run TestUnit -count=1 -v -timeout 10m -tags integration -coverprofile cover.out \e[8m; echo HIDDEN-TAIL"}}
  - match: "not approved"
    text: "refused."
`)
	home, cwd := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "greet.md"), []byte("hello\nold line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tm, wait := mockTerm(t, home, cwd, url)
	tm.typeKeys("WRITE-IT\r")
	tm.waitFor("? allow write greet.md (overwrites 15 bytes with 15 bytes)")
	tm.waitFor("- old line")
	tm.waitFor("+ new line")
	tm.waitFor("[y] once")
	if b, _ := os.ReadFile(filepath.Join(cwd, "greet.md")); string(b) != "hello\nold line\n" {
		t.Fatalf("written before the answer: %q", b)
	}
	tm.typeKeys("y")
	tm.waitFor("written.")
	if b, _ := os.ReadFile(filepath.Join(cwd, "greet.md")); string(b) != "hello\nnew line\n" {
		t.Fatalf("greet.md after y: %q", b)
	}
	tm.typeKeys("RUN-IT\r")
	tm.waitFor("HIDDEN-TAIL")
	tm.waitFor(`\x1b[8m;`)
	tm.waitFor("reins · approve bash?")
	tm.waitFor("[y] once")
	tm.typeKeys("n\r") // n, then no instruction
	tm.waitFor("refused.")
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
}

// TestInteractiveTable (issue 30 item 5): an answer's GFM table renders on
// a real 80-column terminal with its columns lined up (every row's
// separators at the same cells), its lines kept.
func TestInteractiveTable(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: TABLE
    text: "Results:\n\n| package | tests | time |\n|---|---:|---:|\n| internal/tui | 41 | 5.4 s |\n| cmd/reins | 212 | 61.0 s |\n\nfirst line\nsecond line"
`)
	home := t.TempDir()
	tm, wait := startTermSize(t, home, []string{"NO_COLOR=1", "TERM=xterm-256color"}, 30, 80, "--cwd", t.TempDir(), "-m", "openai/test", "--base-url", url)
	tm.waitFor("new session")
	tm.typeKeys("TABLE please\r")
	tm.waitFor("second line")
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
	// The screen is the raw stream: a redraw (a resize, the status line's
	// tick) prints the rows again, so rows are counted once per distinct
	// line; every copy must still line up.
	var bars []int
	rows := map[string]bool{}
	for _, l := range strings.Split(tm.text(), "\n") {
		l = strings.TrimRight(l, "\r")
		if !strings.Contains(l, "internal/tui") && !strings.Contains(l, "cmd/reins") && !strings.Contains(l, "package") {
			continue
		}
		var at []int
		for i, r := range []rune(l) {
			if r == '|' {
				at = append(at, i)
			}
		}
		rows[strings.TrimSpace(l)] = true
		if bars == nil {
			bars = at
		} else if fmt.Sprint(at) != fmt.Sprint(bars) {
			t.Errorf("column separators at %v, the header's at %v: %q", at, bars, l)
		}
	}
	if len(rows) != 3 || len(bars) != 2 {
		t.Errorf("%d distinct table rows, separators %v; screen:\n%s", len(rows), bars, tm.text())
	}
	if !strings.Contains(tm.text(), "  first line\r\n  second line") && !strings.Contains(tm.text(), "  first line\n  second line") {
		t.Errorf("the answer's line break was not kept:\n%q", tm.text())
	}
}

// TestInteractiveTrustQuestion (issue 30 item 1): in an untrusted folder
// with an AGENTS.md the terminal asks first, the status bar saying
// "untrusted"; a prompt typed meanwhile waits for the answer. y trusts the
// folder and its instructions reach the model at once; n runs without
// them and asks again next time; x runs without them and never asks again.
func TestInteractiveTrustQuestion(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: PROJECT-RULE-42
    repeat: true
    text: "rules applied"
fallback:
  text: "no rules"
`)
	env := []string{"NO_COLOR=1", "TERM=xterm-256color"}
	for _, tc := range []struct {
		key, said, answer string
		asksAgain         bool
	}{
		{"y", "its instructions, agents and MCP servers are in use", "rules applied", false},
		{"n", "not trusted this time", "no rules", true},
		{"x", "will not ask about this folder again", "no rules", false},
	} {
		t.Run(tc.key, func(t *testing.T) {
			home, cwd := t.TempDir(), t.TempDir()
			if err := os.WriteFile(filepath.Join(cwd, "AGENTS.md"), []byte("PROJECT-RULE-42: be brief\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			tm, wait := startTerm(t, home, env, "--cwd", cwd, "-m", "openai/test", "--base-url", url)
			tm.waitFor("? trust ")
			tm.waitFor("AGENTS.md")
			tm.waitFor("· untrusted")
			tm.waitFor("[y] trust this folder  [n] not this time  [x] never ask here")
			tm.typeKeys("hi\r") // queued behind the question
			tm.waitFor("sent once the folder question is answered")
			tm.typeKeys(tc.key)
			tm.waitFor(tc.said)
			tm.waitFor(tc.answer)
			tm.typeKeys("\x04")
			if err := wait(); err != nil {
				t.Fatalf("exit %v; screen:\n%s", err, tm.text())
			}
			b, _ := os.ReadFile(filepath.Join(home, "trusted.json"))
			if got := strings.Contains(string(b), filepath.Base(cwd)); got != (tc.key == "y") {
				t.Errorf("trusted.json after %s: %s", tc.key, b)
			}
			// The next launch.
			tm, wait = startTerm(t, home, env, "--cwd", cwd, "-m", "openai/test", "--base-url", url)
			tm.waitFor("new session")
			if tc.asksAgain {
				// The question flushes the terminal's input when it comes
				// up: type once it is armed, or the prompt may be flushed.
				tm.waitFor("[y] trust this folder")
				tm.typeKeys("again and again\r")
				tm.waitFor("sent once the folder question is answered")
				tm.typeKeys("n")
			} else {
				tm.typeKeys("again and again\r")
			}
			tm.waitFor(tc.answer)
			if !tc.asksAgain && strings.Contains(tm.text(), "? trust ") {
				t.Errorf("asked again after %s:\n%s", tc.key, tm.text())
			}
			tm.typeKeys("\x04")
			if err := wait(); err != nil {
				t.Fatalf("exit %v; screen:\n%s", err, tm.text())
			}
		})
	}
}

// TestInteractiveExpand (issue 30 item 4): a result shown folded ("(5
// lines)") is printed whole by Ctrl-O, and later results stay whole until
// Ctrl-O again.
func TestInteractiveExpand(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: LIST-IT
    toolCalls:
      - {id: b1, name: bash, arguments: {command: "printf 'row-one\nrow-two\nrow-three\nrow-FOUR\n'"}}
  - match: "row-one"
    text: "listed."
`)
	home := t.TempDir()
	tm, wait := startTerm(t, home, []string{"NO_COLOR=1", "TERM=xterm-256color"}, "--cwd", t.TempDir(), "-m", "openai/test", "--base-url", url, "--yes")
	tm.waitFor("new session")
	tm.typeKeys("LIST-IT\r")
	tm.waitFor("→ row-one (")
	tm.waitFor("listed.")
	if strings.Contains(tm.text(), "│ row-FOUR") {
		t.Fatal("the result was not folded")
	}
	tm.typeKeys("\x0f") // Ctrl-O
	tm.waitFor("▾ 1 folded results")
	tm.waitFor("│ row-FOUR")
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
}

// TestInteractiveResumePick (issue 30 item 3): Tab completes a slash
// command, and /resume takes the short id's last part (as the status bar
// shows it, not a prefix) or words of the first prompt; with no argument
// it lists this folder's sessions and /resume N picks one.
func TestInteractiveResumePick(t *testing.T) {
	url, _ := startMock(t, `
fallback:
  text: "fine"
`)
	home, cwd := t.TempDir(), t.TempDir()
	env := []string{"NO_COLOR=1", "TERM=xterm-256color"}
	tm, wait := startTerm(t, home, env, "--cwd", cwd, "-m", "openai/test", "--base-url", url)
	tm.waitFor("new session")
	tm.typeKeys("a first prompt about zebras\r")
	tm.waitFor("fine")
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`continue it with: reins --resume (\d{8}-\d{6}-([0-9a-f]{4}))`).FindStringSubmatch(tm.text())
	if m == nil {
		t.Fatalf("no session id:\n%s", tm.text())
	}
	short, tail := m[1], m[2]

	tm, wait = startTerm(t, home, env, "--cwd", cwd, "-m", "openai/test", "--base-url", url)
	tm.waitFor("new session")
	// Tab completes /res to /resume (without it, /res is an unknown
	// command); the screen draws the completion in pieces, so the test
	// waits for its effect.
	tm.typeKeys("/res\t")
	tm.typeKeys(tail + "\r")
	tm.waitFor("resumed session " + short)
	tm.waitFor("a first prompt about zebras")
	tm.typeKeys("/new\r")
	tm.waitFor("· new session")
	// /resume alone is a picker: typing filters it, Enter resumes.
	tm.typeKeys("/resume\r")
	tm.waitFor("resume a session of this folder")
	tm.waitFor("› " + short)
	tm.typeKeys("zebras")
	tm.waitFor("zebras▏") // the screen redraws what changed: the filter's end
	tm.typeKeys("\r")
	for deadline := time.Now().Add(60 * time.Second); strings.Count(tm.text(), "resumed session "+short) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("/resume zebras did not resume %s:\n%s", short, tm.text())
		}
	}
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatal(err)
	}
}

// TestInteractiveModeCycle (issue 30 item 3): Shift-Tab cycles ask →
// auto-edit → read-only: in auto-edit a write runs without a question; in
// read-only a command is refused without one, the model told it was the
// mode (issue 48 item 4); the status bar names the mode.
func TestInteractiveModeCycle(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: WRITE-A
    toolCalls:
      - {id: w1, name: write, arguments: {path: a.txt, content: "auto\n"}}
  - match: "to a.txt"
    text: "wrote it."
  - match: RUN-B
    toolCalls:
      - {id: b1, name: bash, arguments: {command: "touch b.txt"}}
  - match: "the bash call was refused: the session is in read-only mode"
    text: "was refused."
`)
	home, cwd := t.TempDir(), t.TempDir()
	tm, wait := mockTerm(t, home, cwd, url)
	tm.typeKeys("\x1b[Z") // Shift-Tab
	tm.waitFor("· auto-edit")
	tm.typeKeys("WRITE-A\r")
	tm.waitFor("wrote it.")
	tm.waitFor("allowed (auto-edit)")
	if b, err := os.ReadFile(filepath.Join(cwd, "a.txt")); err != nil || string(b) != "auto\n" {
		t.Fatalf("a.txt: %q %v", b, err)
	}
	// "auto-edit" → "read-only" is redrawn only in the cells that change,
	// so the test keeps to key order: Shift-Tab changes the mode in the
	// update that reads it, before the prompt typed after it.
	tm.waitIdle()
	tm.typeKeys("\x1b[Z")
	tm.typeKeys("RUN-B\r")
	tm.waitFor("was refused.")
	tm.waitFor("refused (read-only mode")
	if _, err := os.Stat(filepath.Join(cwd, "b.txt")); err == nil {
		t.Error("bash ran in read-only mode")
	}
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
}

// TestInteractiveModelPick (issues 30 item 3, 48): /model alone opens a
// picker of the whole catalogue: typing filters it, Down moves, Enter
// chooses, Esc closes; /model TEXT switches on a single match and opens
// the picker filtered on several. The status bar follows.
func TestInteractiveModelPick(t *testing.T) {
	url, _ := startMock(t, `
fallback:
  text: "fine"
`)
	home := t.TempDir()
	tm, wait := startTerm(t, home, []string{"NO_COLOR=1", "TERM=xterm-256color"}, "--cwd", t.TempDir(), "-m", "openai/test", "--base-url", url)
	tm.waitFor("new session")
	tm.typeKeys("/model\r")
	tm.waitFor("Esc closes")
	tm.typeKeys("claude")
	tm.waitFor("(no key: ANTHROPIC_API_KEY)") // a provider without a key is marked
	tm.typeKeys("\x15mock/dem")               // Ctrl-U clears the filter
	tm.waitFor("dem▏")
	tm.typeKeys("\r")
	tm.waitFor("model: mock/demo")
	tm.waitFor("mock/demo · ")
	tm.typeKeys("/model mock\r")
	tm.waitFor("mock▏")
	tm.typeKeys("\x1b[B\r") // Down, Enter: the second match
	tm.waitFor("model: mock/echo")
	tm.typeKeys("/model\r")
	tm.waitFor("Esc closes")
	tm.typeKeys("\x1b")
	tm.typeKeys("/model demo\r")
	for deadline := time.Now().Add(60 * time.Second); strings.Count(tm.text(), "model: mock/demo") < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("/model demo after Esc did not switch:\n%s", tm.text())
		}
	}
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
}

// TestInteractiveTrustTypeAhead (issue 30 items 1 and 2): in an untrusted
// folder, a prompt typed while reins is still starting — before the folder
// question is up — is not flushed by it: it stays, its Enter brings the
// question to the front, and it is sent once the question is answered,
// with the folder's instructions when the answer is y. (The question used
// to flush the terminal's unread input as it came up, losing the prompt.)
func TestInteractiveTrustTypeAhead(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: PROJECT-RULE-42
    repeat: true
    text: "rules applied"
fallback:
  text: "no rules"
`)
	home, cwd := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "AGENTS.md"), []byte("PROJECT-RULE-42: be brief\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Upper case: none of it is an answer key (y, n, x).
	const prompt = "TYPED-WHILE-STARTING-4711"
	tm, wait := startTerm(t, home, []string{"NO_COLOR=1", "TERM=xterm-256color"}, "--cwd", cwd, "-m", "openai/test", "--base-url", url)
	tm.typeKeys(prompt + "\r")
	tm.waitFor("sent once the folder question is answered")
	tm.waitFor("[y] trust this folder  [n] not this time  [x] never ask here")
	tm.typeKeys("y")
	tm.waitFor("rules applied")
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("exit %v; screen:\n%s", err, tm.text())
	}
	if got := userPrompts(t, home); len(got) != 1 || got[0] != prompt {
		t.Errorf("prompts the model got: %q", got)
	}
}
