package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/tui/sessionlist"
)

// TestLaunchArgs: the command lines launchArgs rewrites (docs/cli.md#launch-habits)
// and those it leaves alone.
func TestLaunchArgs(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"-p", "TASK"}, []string{"run", "TASK"}},
		{[]string{"--print", "TASK", "--json"}, []string{"run", "TASK", "--json"}},
		{[]string{"-m", "mock/echo", "-p", "TASK"}, []string{"run", "-m", "mock/echo", "TASK"}},
		{[]string{"TASK", "-p"}, []string{"run", "TASK"}},
		{[]string{"-ym", "x", "-p", "T"}, []string{"run", "-ym", "x", "T"}},
		{[]string{"-m", "-p"}, []string{"-m", "-p"}}, // a model named -p: cobra's to judge
		{[]string{"--", "-p"}, []string{"--", "-p"}},
		{[]string{"run", "-p", "x"}, []string{"run", "-p", "x"}},
		{[]string{"-m", "x", "log", "-p"}, []string{"-m", "x", "log", "-p"}},
		{[]string{"--resume"}, []string{"--resume="}},
		{[]string{"--resume", "-m", "x"}, []string{"--resume=", "-m", "x"}},
		{[]string{"--resume", "ID"}, []string{"--resume", "ID"}},
		{[]string{"--resume", "ID", "TASK"}, []string{"--resume", "ID", "TASK"}},
		{[]string{"--resume=ID"}, []string{"--resume=ID"}},
		{[]string{"run", "--resume"}, []string{"run", "--resume"}},
		{[]string{"TASK", "--", "--resume"}, []string{"TASK", "--", "--resume"}},
	} {
		if got := launchArgs(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("launchArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestLaunchMistypedCommand (issue 48): `reins WORD` with WORD within two
// edits of a command's name is that command mistyped, not a task: exit 2,
// "did you mean"; a sentence is a task, which off a terminal is exit 2
// pointing at -p (never a headless run nobody asked for).
func TestLaunchMistypedCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lgo"}, `unknown command "lgo" for "reins"; did you mean log?`},
		{[]string{"versoin"}, "did you mean version?"},
		{[]string{"dmeo"}, "did you mean demo?"},
		{[]string{"rn", "hi"}, "did you mean run?"},
		{[]string{"explain this repo"}, `reins -p "TASK"`},
		{[]string{"explain", "this"}, `reins -p "TASK"`},
	} {
		code, stderr := exitCode(t, reinsCmd(t, t.TempDir(), tc.args...))
		if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("reins %q: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestLaunchPrint (issue 48): `reins -p TASK` is `reins run TASK`, with
// reins run's flags.
func TestLaunchPrint(t *testing.T) {
	for _, args := range [][]string{
		{"-p", "hello there"},
		{"-m", "mock/echo", "--print", "hello there"},
		{"--json", "-p", "hello there"},
	} {
		full := append([]string{"-m", "mock/echo"}, args...)
		cmd := reinsCmd(t, t.TempDir(), full...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("reins %q: %v", full, err)
		}
		if slices.Contains(args, "--json") {
			var res runResult
			if err := json.Unmarshal(out, &res); err != nil || res.StopReason != "completed" || !strings.Contains(res.Output, "hello there") {
				t.Errorf("reins %q: %v, %s", full, err, out)
			}
		} else if !strings.Contains(string(out), "hello there") {
			t.Errorf("reins %q printed %q, want the echo of the task", full, out)
		}
	}
}

// TestLaunchTaskOnTerminal (issue 48): `reins "TASK"` on a terminal opens
// the interactive session with TASK sent as its first prompt.
func TestLaunchTaskOnTerminal(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: explain this repo
    text: "ANSWER-TO-THE-TASK"
fallback:
  text: "wrong prompt"
`)
	tm, wait := startTerm(t, t.TempDir(), []string{"NO_COLOR=1", "TERM=xterm-256color"}, "--cwd", t.TempDir(), "-m", "openai/test", "--base-url", url, "explain this repo")
	tm.waitFor("› explain this repo")
	tm.waitFor("ANSWER-TO-THE-TASK")
	tm.waitIdle()
	tm.typeKeys("\x04")
	if err := waitTermExit(t, tm, wait); err != nil {
		t.Fatalf("exit after Ctrl-D: %v; screen:\n%s", err, tm.text())
	}
}

// TestLaunchResume (issue 48): `reins --resume` with no id opens the
// terminal with this folder's sessions listed; `reins --resume ID` (and
// `reins --resume ID "TASK"`) continues ID, as it always did.
func TestLaunchResume(t *testing.T) {
	url, _ := startMock(t, `
replies:
  - match: go on with it
    text: "WENT-ON"
fallback:
  text: "fine"
`)
	home, cwd := t.TempDir(), t.TempDir()
	run := reinsCmd(t, home, "run", "--json", "--cwd", cwd, "-m", "openai/test", "--base-url", url, "a first prompt about zebras")
	out, err := run.Output()
	var res runResult
	if err != nil || json.Unmarshal(out, &res) != nil || res.SessionID == "" {
		t.Fatalf("reins run: %v, %s", err, out)
	}
	short := sessionlist.ShortID(res.SessionID)
	env := []string{"NO_COLOR=1", "TERM=xterm-256color"}

	// Bare --resume: the session list, the earlier session in it.
	tm, wait := startTerm(t, home, env, "--cwd", cwd, "-m", "openai/test", "--base-url", url, "--resume")
	tm.waitFor("new session")
	tm.waitFor(short)
	if strings.Contains(tm.text(), "resumed session") {
		t.Errorf("a bare --resume resumed a session instead of listing them:\n%s", tm.text())
	}
	tm.typeKeys("\x04")
	if err := waitTermExit(t, tm, wait); err != nil {
		t.Fatalf("exit after Ctrl-D: %v; screen:\n%s", err, tm.text())
	}

	// --resume ID: that session, its history shown; with a task, the
	// task sent to it.
	tm, wait = startTerm(t, home, env, "-m", "openai/test", "--base-url", url, "--resume", res.SessionID, "go on with it")
	tm.waitFor("resumed session " + short)
	tm.waitFor("a first prompt about zebras")
	tm.waitFor("WENT-ON")
	tm.waitIdle()
	tm.typeKeys("\x04")
	if err := waitTermExit(t, tm, wait); err != nil {
		t.Fatalf("exit after Ctrl-D: %v; screen:\n%s", err, tm.text())
	}
	if !strings.Contains(tm.text(), "continue it with: reins --resume "+short) {
		t.Errorf("--resume ID did not continue %s:\n%s", short, tm.text())
	}

	// A bare --resume with a task is refused: which session would it go to?
	code, stderr := exitCode(t, reinsCmd(t, home, "--resume", "-m", "openai/test", "TASK"))
	if code != exitUsage {
		t.Errorf("reins --resume -m M TASK: exit %d, stderr %q; want 2", code, stderr)
	}
}

// waitTermExit waits (generously) for the terminal's reins to exit.
func waitTermExit(t *testing.T, tm *ptyTerm, wait func() error) error {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- wait() }()
	select {
	case err := <-errc:
		return err
	case <-time.After(60 * time.Second):
		t.Fatalf("reins did not exit; screen:\n%s", tm.text())
	}
	return nil
}

// TestLaunchArgsCommandFirstIsFree: a command line that starts with a
// command is returned as it is without a flag set being built (it was,
// for every command, at a cost in every `reins version` and `reins run`).
func TestLaunchArgsCommandFirstIsFree(t *testing.T) {
	args := []string{"run", "-m", "mock/echo", "--sandbox=off", "a task"}
	if n := testing.AllocsPerRun(50, func() { _ = launchArgs(args) }); n != 0 {
		t.Errorf("launchArgs allocated %v times for %q", n, args)
	}
}
