package tool

import (
	"context"
	"errors"
	"fmt"
	"github.com/reinsdev/reins/proc"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestBash(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	writeFiles(t, env.Workspace, map[string]string{"f.txt": "content\n"})
	tests := []struct {
		name    string
		args    map[string]any
		isError bool
		want    string
	}{
		{name: "ok", args: map[string]any{"command": "echo hi"}, want: "hi\n[exit code 0]"},
		{name: "no output", args: map[string]any{"command": "true"}, want: "[exit code 0]"},
		{name: "runs in workspace", args: map[string]any{"command": "cat f.txt"}, want: "content\n[exit code 0]"},
		{name: "stderr combined", args: map[string]any{"command": "echo out; echo err >&2; echo out2"},
			want: "out\nerr\nout2\n[exit code 0]"},
		{name: "non-zero exit", args: map[string]any{"command": "echo failing; exit 3"}, isError: true,
			want: "failing\n[exit code 3]"},
		{name: "killed by signal", args: map[string]any{"command": "kill -KILL $$"}, isError: true,
			want: "[command was killed: signal: killed]"},
		{name: "timeout given", args: map[string]any{"command": "echo fast", "timeout": 30}, want: "fast\n[exit code 0]"},
		{name: "bad timeout", args: map[string]any{"command": "true", "timeout": -1}, isError: true,
			want: "timeout must be more than 0 seconds"},
		{name: "empty command", args: map[string]any{"command": " "}, isError: true, want: "command is empty"},
		{name: "missing command", args: map[string]any{}, isError: true, want: `missing required parameter "command"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, env, "bash", tt.args)
			if res.IsError != tt.isError || res.Content != tt.want {
				t.Errorf("bash = {IsError:%v}\n%s\nwant {IsError:%v}\n%s", res.IsError, res.Content, tt.isError, tt.want)
			}
		})
	}
}

func TestBashOutputKept(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	env.OutputCap = 100_000 // bash keeps head and tail within the result cap
	res := call(t, env, "bash", map[string]any{"command": "head -c 1100000 /dev/zero | tr '\\0' x"})
	wantResult(t, res, false, "bytes of output dropped from the middle (1100000 in all) ...]\nxxx")
	if !strings.HasSuffix(res.Content, "x\n[exit code 0]") || len(res.Content) > env.OutputCap {
		t.Errorf("result is %d bytes (cap %d), ends %q", len(res.Content), env.OutputCap, res.Content[len(res.Content)-40:])
	}
}

var pgidLine = regexp.MustCompile(`pgid=(\d+)`)

// pgidOf finds the "pgid=N" line the test commands print.
func pgidOf(t *testing.T, res Result) int {
	t.Helper()
	m := pgidLine.FindStringSubmatch(res.Content)
	if m == nil {
		t.Fatalf("no pgid in result:\n%s", res.Content)
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// assertGroupGone fails if any live (non-zombie) process of group pgid is
// left. Checked once, right after Run returned: Run promises the group is
// gone by then.
func assertGroupGone(t *testing.T, pgid int) {
	t.Helper()
	err := syscall.Kill(-pgid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return
	}
	live, ok := proc.LiveInGroup(pgid)
	if !ok {
		t.Fatalf("kill(-%d, 0) = %v and /proc is unreadable", pgid, err)
	}
	if live {
		_ = syscall.Kill(-pgid, syscall.SIGKILL) // clean up for the next tests
		t.Fatalf("process group %d still has live processes after Run returned", pgid)
	}
}

// timedOutCall runs command (which prints its pgid, then waits) with a
// timeout of 5 s, and again with a longer one when the timeout fell before
// the shell had even printed (a loaded machine starting the sandbox and
// bash): the verdict is about what the timeout kills, not how fast bash
// starts.
func timedOutCall(t *testing.T, env *Env, command string) Result {
	t.Helper()
	var res Result
	for _, timeout := range []int{5, 20, 60} {
		res = call(t, env, "bash", map[string]any{"command": command, "timeout": timeout})
		wantResult(t, res, true, fmt.Sprintf("[command timed out after %d s and was killed]", timeout))
		if pgidLine.MatchString(res.Content) {
			return res
		}
		t.Logf("timeout %d s fell before the shell printed; trying a longer one", timeout)
	}
	return res
}

func TestBashTimeoutKillsGroup(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	res := timedOutCall(t, env, "echo pgid=$$; sleep 300 & sleep 300")
	assertGroupGone(t, pgidOf(t, res))
}

func TestBashTimeoutIgnoringTERM(t *testing.T) {
	// SIGTERM is ignored by the shell and, inherited, by both sleeps: only
	// the SIGKILL step of the ladder ends them.
	env := newEnv(t, WorkspaceWrite)
	res := timedOutCall(t, env, "trap '' TERM; echo pgid=$$; sleep 300 & sleep 300")
	assertGroupGone(t, pgidOf(t, res))
}

func TestBashCancelKillsGroup(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Result, 1)
	go func() {
		done <- callCtx(t, ctx, env, "bash", map[string]any{
			"command": "echo pgid=$$; sleep 300 & touch started; sleep 300",
		})
	}()
	// Cancel once the command is surely running, i.e. its marker exists.
	marker := filepath.Join(env.Workspace, "started")
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		select {
		case res := <-done:
			t.Fatalf("bash returned before cancel: %+v", res)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	res := <-done
	wantResult(t, res, true, "[command canceled and killed]")
	assertGroupGone(t, pgidOf(t, res))
}

func TestBashBackgroundChildDoesNotHang(t *testing.T) {
	// The background sleep holds the output pipe; Run must still return
	// once the shell exits, and take the sleep down with it.
	env := newEnv(t, WorkspaceWrite)
	res := call(t, env, "bash", map[string]any{"command": "echo pgid=$$; sleep 300 & echo started"})
	wantResult(t, res, false, "started\n[exit code 0]")
	assertGroupGone(t, pgidOf(t, res))
}

func TestBashCanceledBeforeStart(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := callCtx(t, ctx, env, "bash", map[string]any{"command": "touch ran"})
	wantResult(t, res, true, "canceled")
	if _, err := os.Stat(filepath.Join(env.Workspace, "ran")); err == nil {
		t.Error("command ran after its context was canceled")
	}
}

func TestHeadTailBuffer(t *testing.T) {
	h := newHeadTail(4, 6)
	for _, s := range []string{"ab\nc", "defg", "hi\njk", "\nlm"} {
		if n, err := h.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	// 16 bytes: head "ab\nc" cut to "ab\n", tail "\njk\nlm" from its first full line.
	if got, want := h.String(), "ab\n[... 8 bytes of output dropped from the middle (16 in all) ...]\njk\nlm"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	small := newHeadTail(4, 6)
	small.Write([]byte("0123456789"))
	if got := small.String(); got != "0123456789" {
		t.Errorf("output that fits = %q", got)
	}
	if got := newHeadTail(5, 5).String(); got != "" {
		t.Errorf("empty buffer = %q", got)
	}
	big := newHeadTail(3, 3)
	big.Write([]byte("abcdefghijklmnop"))
	if got := big.String(); !strings.HasSuffix(got, "nop") || !strings.HasPrefix(got, "abc\n[... 10 bytes") {
		t.Errorf("one big write = %q", got)
	}
}

// TestBashLongOutputKeepsTail: a command printing far more than the cap
// still shows its last line and its exit code to the model (issue 29 item
// 2: the failure of a build log is at its end), and says how much of the
// middle was dropped.
func TestBashLongOutputKeepsTail(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	res := call(t, env, "bash", map[string]any{"command": "seq 1 400000; echo FAIL; exit 3"})
	if !res.IsError {
		t.Fatal("exit 3 is not an error result")
	}
	if !strings.HasSuffix(res.Content, "400000\nFAIL\n[exit code 3]") {
		t.Errorf("result does not end with the tail and the exit code: …%q", res.Content[max(0, len(res.Content)-200):])
	}
	if !strings.HasPrefix(res.Content, "1\n2\n3\n") || !strings.Contains(res.Content, "bytes of output dropped from the middle") {
		t.Errorf("result lacks the head or the dropped-bytes line: %q…", res.Content[:200])
	}
	if len(res.Content) > DefaultOutputCap {
		t.Errorf("result is %d bytes, over the cap %d", len(res.Content), DefaultOutputCap)
	}
}
