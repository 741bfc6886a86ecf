package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/reinsdev/reins/internal/session"
)

// term is a reins process on a real pseudo-terminal: what it wrote so
// far, and keys typed into it.
type ptyTerm struct {
	t    *testing.T
	cmd  *exec.Cmd
	ptmx *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func startTerm(t *testing.T, home string, env []string, args ...string) (*ptyTerm, func() error) {
	t.Helper()
	return startTermSize(t, home, env, 40, 100, args...)
}

// startTermSize is startTerm on a terminal of rows × cols.
func startTermSize(t *testing.T, home string, env []string, rows, cols uint16, args ...string) (*ptyTerm, func() error) {
	t.Helper()
	useTUIHelper(t)
	cmd := reinsCmd(t, home, args...)
	cmd.Env = append(cmd.Env, env...)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: rows, Cols: cols})
	if err != nil {
		t.Fatalf("this test needs a pseudo-terminal (/dev/ptmx): %v", err)
	}
	tm := &ptyTerm{t: t, cmd: cmd, ptmx: ptmx, done: make(chan struct{})}
	go func() {
		defer close(tm.done)
		buf := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { ptmx.Close(); cmd.Process.Kill(); cmd.Wait() })
	return tm, func() error {
		err := cmd.Wait()
		<-tm.done
		return err
	}
}

var ansiSeq = regexp.MustCompile(`\x1b\[[0-9;?<>=$]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\|\x1b[=>()][0-9A-Za-z]?`)

// text is the output so far without escape sequences; raw with them.
func (tm *ptyTerm) raw() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()
}

func (tm *ptyTerm) text() string { return ansiSeq.ReplaceAllString(tm.raw(), "") }

// waitFor waits (generously) until the output contains s, raw or plain.
func (tm *ptyTerm) waitFor(s string) {
	tm.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(tm.text(), s) || strings.Contains(tm.raw(), s) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	tm.t.Fatalf("the screen never showed %q; it showed:\n%s", s, tm.text())
}

// windowTitle matches the window-title sequence the screen sets (OSC 2).
var windowTitle = regexp.MustCompile("\x1b\\]2;([^\x07\x1b]*)(?:\x07|\x1b\\\\)")

// waitIdle waits (generously) until no turn runs: the last window title
// the screen set is "reins" (it says "reins · running" while a turn runs
// and "reins · approve …?" while it asks). A slash command typed while a
// turn still runs is refused ("a turn is running"), so a test that saw a
// turn's answer waits for this, the screen's own word, before typing one —
// never for a time.
func (tm *ptyTerm) waitIdle() {
	tm.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if m := windowTitle.FindAllStringSubmatch(tm.raw(), -1); len(m) > 0 && m[len(m)-1][1] == "reins" {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	tm.t.Fatalf("the screen never went idle; it showed:\n%s", tm.text())
}

// cmdSignal sends SIGTERM to reins.
func (tm *ptyTerm) cmdSignal(t *testing.T) {
	t.Helper()
	if err := tm.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}

func (tm *ptyTerm) typeKeys(s string) {
	tm.t.Helper()
	if _, err := tm.ptmx.WriteString(s); err != nil {
		tm.t.Fatal(err)
	}
}

// TestInteractivePTY (issue 20): `reins` with no task on a real terminal,
// against the mock model: a prompt typed and its answer streamed; a write
// asked about and approved; two children delegated and shown in the tree
// with their stop reasons; a turn cancelled with Esc; Ctrl-D exits 0. The
// session log holds all of it, `reins log` renders it and `reins run
// --resume` continues it.
func TestInteractivePTY(t *testing.T) {
	url, srv := startMock(t, `
replies:
  - match: WRITE-IT
    text: "Writing the file."
    toolCalls:
      - {id: w1, name: write, arguments: {path: notes.txt, content: "first line\nsecond line\n"}}
  - match: "to notes.txt"
    text: "The **file** is written."
  - match: DELEGATE
    toolCalls:
      - {id: s1, name: subagent, arguments: {description: first child, prompt: "CHILD-ONE look around"}}
      - {id: s2, name: subagent, arguments: {description: second child, prompt: "CHILD-TWO look around"}}
  - match: CHILD-ONE
    text: "one is done"
  - match: CHILD-TWO
    text: "two ran out of roo"
    finish: length
  - match: "ran out of roo"
    text: "Both children reported."
  - match: SLOW
    text: "this answer takes a long time to arrive, word by word, and it never ends before Esc"
    chunk: 4
    chunkDelay: 500ms
  - match: AFTER
    text: "resumed fine"
`)
	home := t.TempDir()
	cwd := t.TempDir()
	env := []string{"NO_COLOR=1", "TERM=xterm-256color"}
	tm, wait := startTerm(t, home, env, "--cwd", cwd, "-m", "openai/test", "--base-url", url)

	tm.waitFor("new session")
	tm.typeKeys("WRITE-IT please\r")
	// The write asks first: the question, and the window title.
	tm.waitFor("reins · approve write?")
	tm.waitFor("[y] once")
	tm.typeKeys("y")
	tm.waitFor("write path=notes.txt (23 bytes): allowed")
	tm.waitFor("+ first line")
	tm.waitFor("file** is written.")
	if b, err := os.ReadFile(filepath.Join(cwd, "notes.txt")); err != nil || string(b) != "first line\nsecond line\n" {
		t.Fatalf("notes.txt: %q %v", b, err)
	}

	tm.typeKeys("DELEGATE to two children\r")
	tm.waitFor("Both children reported.")
	tm.waitFor("first child  completed")
	tm.waitFor("second child  max-tokens")

	before := srv.Count()
	tm.typeKeys("SLOW answer\r")
	for deadline := time.Now().Add(60 * time.Second); srv.Count() == before; {
		if time.Now().After(deadline) {
			t.Fatal("the SLOW request never reached the model")
		}
		time.Sleep(10 * time.Millisecond)
	}
	tm.typeKeys("\x1b")
	tm.waitFor("turn ended: aborted by user")

	tm.typeKeys("\x04") // Ctrl-D
	if err := wait(); err != nil {
		t.Fatalf("reins exited with %v; screen:\n%s", err, tm.text())
	}
	tm.waitFor("continue it with: reins --resume ")

	// The session log says what the screen said.
	root := filepath.Join(home, "sessions")
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	for _, e := range ents {
		ld, err := session.Load(filepath.Join(root, e.Name(), session.FileName))
		if err != nil {
			t.Fatal(err)
		}
		if ld.Header.ParentSession == "" {
			id = ld.Header.ID
		}
	}
	ld, err := session.Load(filepath.Join(root, id, session.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var ends []session.TurnEnd
	var stops []string
	var wroteOK bool
	for _, e := range ld.Events {
		switch e.Type {
		case session.TypeTurnEnd:
			var d session.TurnEnd
			e.Decode(&d)
			ends = append(ends, d)
		case session.TypeSubagentEnd:
			var d session.SubagentEnd
			e.Decode(&d)
			stops = append(stops, d.StopReason)
		case session.TypeToolResult:
			var d session.ToolResult
			e.Decode(&d)
			if d.CallID == "w1" && !d.IsError {
				wroteOK = true
			}
		}
	}
	if !wroteOK {
		t.Error("the log has no successful write result")
	}
	sort.Strings(stops) // the two ran concurrently
	if strings.Join(stops, ",") != "completed,max-tokens" {
		t.Errorf("children's stop reasons in the log: %v", stops)
	}
	if len(ends) != 3 || ends[0].Reason != "completed" || ends[1].Reason != "completed" ||
		ends[2].Reason != session.ReasonAborted || ends[2].By != session.AbortedByUser {
		t.Errorf("turn ends: %+v", ends)
	}

	// reins log renders it; reins run --resume continues it.
	cmd := reinsCmd(t, home, "log", id)
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "Both children reported.") {
		t.Errorf("reins log %s: %v\n%s", id, err, out)
	}
	cmd = reinsCmd(t, home, "run", "-m", "openai/test", "--base-url", url, "--resume", id, "AFTER")
	out, err = cmd.Output()
	if err != nil || string(out) != "resumed fine\n" {
		t.Errorf("reins run --resume: %v %q", err, out)
	}

	// And the reverse: the interactive session reopens what reins run
	// added, showing the conversation so far.
	tm, wait = startTerm(t, home, env, "-m", "openai/test", "--base-url", url, "--resume", id[:len(id)-3])
	tm.waitFor("resumed session " + id)
	tm.waitFor("resumed fine")
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("reins --resume exited with %v; screen:\n%s", err, tm.text())
	}
}

// TestNoTaskNotTerminal (issue 20): `reins` without a task opens the
// interactive session only with stdin and stdout on a terminal; otherwise
// it prints the help on stderr and exits 2 (a usage error: no task).
// /dev/null is a character device but no terminal.
func TestNoTaskNotTerminal(t *testing.T) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("this test needs a pseudo-terminal (/dev/ptmx): %v", err)
	}
	// The master stays referenced: collected, it would close and hang the
	// terminal up, and tty would be no terminal at all.
	defer ptmx.Close()
	defer tty.Close()
	for _, tc := range []struct {
		name   string
		stdin  *os.File
		stdout bool // stdout on the terminal
	}{
		{"stdin /dev/null", devnull, true},
		{"stdin a pipe", nil, true},
		{"stdout a pipe", tty, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := reinsCmd(t, t.TempDir(), "-m", "mock/echo")
			if tc.stdin != nil {
				cmd.Stdin = tc.stdin
			} else {
				cmd.Stdin = strings.NewReader("")
			}
			var out bytes.Buffer
			if tc.stdout {
				cmd.Stdout = tty
			} else {
				cmd.Stdout = &out
			}
			code, stderr := exitCode(t, cmd)
			if code != exitUsage || !strings.Contains(stderr, "Usage:") || !strings.Contains(stderr, `reins ["TASK"] [flags]`) {
				t.Errorf("exit %d, stderr %q", code, stderr)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q", out.String())
			}
		})
	}
}

// TestInteractiveSIGTERM: SIGTERM while a turn runs a command ends
// reins promptly: the command is torn down (the test binary's process
// check fails on a leftover), and the log's last turn ends aborted.
func TestInteractiveSIGTERM(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: SLEEPY
    toolCalls:
      - {id: b1, name: bash, arguments: {command: "sleep 120"}}
fallback:
  text: "done"
`)
	home := t.TempDir()
	tm, wait := startTerm(t, home, []string{"NO_COLOR=1"}, "--cwd", t.TempDir(), "-m", "openai/test", "--base-url", url, "--yes")
	tm.waitFor("new session")
	tm.typeKeys("SLEEPY\r")
	// The call is on disk (synced) before the command starts.
	logPath := waitLogged(t, tm, home, `"tool/call"`)
	time.Sleep(200 * time.Millisecond) // let the command start; not a timing assertion
	tm.cmdSignal(t)
	errc := make(chan error, 1)
	go func() { errc <- wait() }()
	select {
	case err := <-errc:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
			t.Errorf("exit after SIGTERM: %v, want status 143", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("reins did not exit after SIGTERM")
	}
	ld, err := session.Load(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if last := lastTurnEnd(t, ld); last.Reason != session.ReasonAborted {
		t.Errorf("last turn/end %+v, want aborted", last)
	}
}

// TestInteractiveHangup: the terminal going away (SIGHUP) while a turn
// runs a command ends reins as SIGTERM does: exit 129, the command torn
// down, the turn recorded aborted.
func TestInteractiveHangup(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: SLEEPY
    toolCalls:
      - {id: b1, name: bash, arguments: {command: "sleep 120"}}
fallback:
  text: "done"
`)
	home := t.TempDir()
	tm, wait := startTerm(t, home, []string{"NO_COLOR=1"}, "--cwd", t.TempDir(), "-m", "openai/test", "--base-url", url, "--yes")
	tm.waitFor("new session")
	tm.typeKeys("SLEEPY\r")
	logPath := waitLogged(t, tm, home, `"tool/call"`)
	if err := tm.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- wait() }()
	select {
	case err := <-errc:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGHUP) {
			t.Errorf("exit after SIGHUP: %v, want status 129", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("reins did not exit after SIGHUP")
	}
	ld, err := session.Load(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if last := lastTurnEnd(t, ld); last.Reason != session.ReasonAborted {
		t.Errorf("last turn/end %+v, want aborted", last)
	}
}

// waitLogged waits until the only session log under home holds s.
func waitLogged(t *testing.T, tm *ptyTerm, home, s string) string {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never held %s; screen:\n%s", s, tm.text())
		}
		paths, _ := filepath.Glob(filepath.Join(home, "sessions", "*", session.FileName))
		if len(paths) == 1 {
			if b, _ := os.ReadFile(paths[0]); bytes.Contains(b, []byte(s)) {
				return paths[0]
			}
		}
	}
}
