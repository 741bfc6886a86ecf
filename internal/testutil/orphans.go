package testutil

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// MarkEnv is the environment variable that marks every process a test
// starts. Children inherit their parent's environment, so a bash command a
// tool runs, a reins re-exec'd by a CLI test and the node process it
// starts all carry the mark of the test that began the chain. A process
// still carrying a mark after its test (or after the whole suite, see
// scripts/check-orphans.sh) was left behind: docs/subagents.md says none may be.
//
// The mark is set by test code only, never by the environment the suite
// runs in, so the test binaries themselves and the go tool are unmarked.
const MarkEnv = "REINS_TEST_MARK"

// OrphanWait is how long a check waits for marked processes to go away
// before it calls them orphans: a child being torn down when its test
// returns (SIGTERM sent, not yet exited), or killed by the kernel with its
// dead parent (a dying process still needs the CPU to exit), is not a
// leak. It is generous because a busy machine is a normal machine — 2 s
// ran out at load 37 — and it costs nothing when nothing is left; an
// orphan the checks look for (a sleep of 60 s or more) is still caught.
var OrphanWait = 30 * time.Second

// Proc is a live process carrying a mark.
type Proc struct {
	PID     int
	Mark    string
	Cmdline string
}

func (p Proc) String() string {
	return fmt.Sprintf("pid %d [%s=%s] %s", p.PID, MarkEnv, p.Mark, p.Cmdline)
}

// Mark sets MarkEnv in this process's environment to name/PID, so every
// process it starts from now on carries it, and returns the mark. Call it
// first thing in TestMain of a package whose tests start processes (the
// bash tool inherits os.Environ, so this is enough for it), and check the
// mark after the tests with ExitUnlessClean or Clean.
//
// A test binary that was itself started marked (re-exec'd as a fake child
// or as a testscript command) keeps the mark it inherited, so its own
// children are traced to the test that started it.
func Mark(name string) string {
	if inherited := os.Getenv(MarkEnv); inherited != "" {
		return inherited
	}
	mark := name + "/" + strconv.Itoa(os.Getpid())
	os.Setenv(MarkEnv, mark)
	return mark
}

// MarkChildren returns the environment entry MarkEnv=<mark>/<test name>
// for the processes t starts (append it to exec.Cmd.Env), and makes t fail,
// naming them, if any process carrying it is alive when t's cleanups run.
// Register it before starting the processes, so the check runs after the
// cleanups that stop them. It works in parallel tests, unlike t.Setenv.
func MarkChildren(t testing.TB) string {
	t.Helper()
	parent := os.Getenv(MarkEnv)
	if parent == "" {
		parent = "test/" + strconv.Itoa(os.Getpid())
	}
	mark := parent + "/" + t.Name()
	t.Cleanup(func() {
		if left := LeftBehind(mark, OrphanWait); len(left) > 0 {
			t.Errorf("%d process(es) left behind by %s:\n%s", len(left), t.Name(), procList(left))
		}
	})
	return MarkEnv + "=" + mark
}

// ExitUnlessClean returns an exit function for the end of TestMain, to
// pass to goleak.VerifyTestMain as goleak.Cleanup: it exits with
// Clean(mark, code).
func ExitUnlessClean(mark string) func(code int) {
	return func(code int) { os.Exit(Clean(mark, code)) }
}

// Clean is the end of a TestMain that checks for orphans: it returns code,
// or 1 after listing on stderr the processes still carrying mark.
func Clean(mark string, code int) int {
	if left := LeftBehind(mark, OrphanWait); len(left) > 0 {
		fmt.Fprintf(cleanOut, "FAIL: %d process(es) left behind by the tests:\n%s\n", len(left), procList(left))
		if code == 0 {
			code = 1
		}
	}
	return code
}

// cleanOut is where Clean lists orphans.
var cleanOut io.Writer = os.Stderr

// LeftBehind waits up to wait for the processes carrying mark (or a mark
// below it: mark/...) to exit and returns those still alive.
func LeftBehind(mark string, wait time.Duration) []Proc {
	deadline := time.Now().Add(wait)
	for {
		left := Marked(mark)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Marked scans /proc for live processes other than this one whose
// environment holds MarkEnv equal to mark or below it (mark/...); an empty
// mark matches any. Zombies have no environment and do not count: they are
// gone, only not yet reaped by their parent.
func Marked(mark string) []Proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []Proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue // gone, or not ours to read
		}
		v, ok := markOf(env)
		if !ok || (mark != "" && v != mark && !strings.HasPrefix(v, mark+"/")) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, Proc{PID: pid, Mark: v, Cmdline: strings.TrimSpace(string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))})
	}
	return out
}

// markOf finds MarkEnv in a NUL-separated environment block.
func markOf(env []byte) (string, bool) {
	prefix := []byte(MarkEnv + "=")
	for _, kv := range bytes.Split(env, []byte{0}) {
		if bytes.HasPrefix(kv, prefix) {
			return string(kv[len(prefix):]), true
		}
	}
	return "", false
}

func procList(ps []Proc) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  " + p.String() + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}
