package tool

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/testutil"
)

// TestBashIsConfined: under workspace-write the bash tool writes inside the
// workspace and nowhere else; full-access lifts the bound; a setsid daemon
// is gone when the call returns (issue 12, findings 3 and 4).
func TestBashIsConfined(t *testing.T) {
	outside := t.TempDir()
	target := filepath.Join(outside, "escaped")
	cases := []struct {
		perm    Permission
		landed  bool
		isError bool
	}{
		{WorkspaceWrite, false, true},
		{FullAccess, true, false},
	}
	for _, c := range cases {
		t.Run(string(c.perm), func(t *testing.T) {
			os.Remove(target)
			env := newEnv(t, c.perm)
			res := call(t, env, "bash", map[string]any{"command": "echo x > '" + target + "' && echo inside > in.txt"})
			if _, err := os.Stat(target); (err == nil) != c.landed {
				t.Errorf("write outside landed=%v, want %v: %s", err == nil, c.landed, res.Content)
			}
			if res.IsError != c.isError {
				t.Errorf("IsError=%v, want %v: %s", res.IsError, c.isError, res.Content)
			}
			if c.landed {
				if _, err := os.Stat(filepath.Join(env.Workspace, "in.txt")); err != nil {
					t.Errorf("write inside failed: %v", err)
				}
			}
		})
	}
	t.Run("inside under workspace-write", func(t *testing.T) {
		env := newEnv(t, WorkspaceWrite)
		res := call(t, env, "bash", map[string]any{"command": "mkdir -p a/b && echo ok > a/b/f && mv a/b/f a/g && cat a/g"})
		if res.IsError || !strings.HasPrefix(res.Content, "ok\n") {
			t.Errorf("work inside the workspace failed: %s", res.Content)
		}
	})
}

func TestBashSetsidDaemonEndsWithTheCall(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	// The pid the command sees is its PID namespace's, not ours: the daemon
	// is found on the host by a marker in its arguments. The command first
	// waits until the daemon runs as `sleep MARKER` (seen in its own /proc),
	// so the check below cannot pass on a daemon that never started.
	marker := testutil.SleepMarker(60)
	res := call(t, env, "bash", map[string]any{"command": "setsid -f bash -c 'echo $$ > daemon.pid; exec sleep " + marker + "'; " +
		"for i in $(seq 250); do test -s daemon.pid && tr '\\0' ' ' < /proc/$(cat daemon.pid)/cmdline 2>/dev/null | grep -q '" + marker + "' && echo up && break; sleep 0.02; done"})
	if res.IsError {
		t.Fatalf("bash: %s", res.Content)
	}
	if !strings.Contains(res.Content, "up") {
		t.Fatalf("the setsid daemon never ran: %s", res.Content)
	}
	if left := testutil.SleepLeftBehind(marker, testutil.OrphanWait); len(left) > 0 {
		t.Fatalf("the setsid daemon (host pids %v) outlived the tool call", left)
	}
}

// TestBashWritableFromConfig: a path the user made writable (config
// sandbox.writable) takes writes under workspace-write; a sibling does not.
func TestBashWritableFromConfig(t *testing.T) {
	cache, other := t.TempDir(), t.TempDir()
	env := newEnv(t, WorkspaceWrite)
	env.Sandbox.Writable = []string{cache}
	res := call(t, env, "bash", map[string]any{"command": "echo x > '" + cache + "/ok'; echo x > '" + other + "/no'"})
	if _, err := os.Stat(filepath.Join(cache, "ok")); err != nil {
		t.Errorf("write to the writable path failed: %s", res.Content)
	}
	if _, err := os.Stat(filepath.Join(other, "no")); err == nil {
		t.Errorf("write outside every writable path landed")
	}
}

// TestBashGitReadOnlyNote (issue 47): a command that fails because .git is
// read-only says so in its result, once, with what the user can do; a
// failure of another kind and a command that succeeds get no note, nor
// does a workspace whose .git is writable by configuration.
func TestBashGitReadOnlyNote(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	testutil.Git(t, env.Workspace, "init", "-q")
	testutil.Git(t, env.Workspace, "config", "user.email", "t@e")
	testutil.Git(t, env.Workspace, "config", "user.name", "t")
	res := call(t, env, "bash", map[string]any{"command": "echo x > f && git add f && git commit -qm x"})
	wantResult(t, res, true, "note: .git is read-only to sandboxed commands")
	if n := strings.Count(res.Content, "note: .git is read-only"); n != 1 {
		t.Errorf("the note appears %d times:\n%s", n, res.Content)
	}
	for _, cmd := range []string{"echo fine", "exit 3", "false > /etc/passwd"} {
		if res := call(t, env, "bash", map[string]any{"command": cmd}); strings.Contains(res.Content, "note: .git") {
			t.Errorf("%q got the .git note:\n%s", cmd, res.Content)
		}
	}
	env.Sandbox.GitWritable = true
	res = call(t, env, "bash", map[string]any{"command": "git add f && git commit -qm x && echo committed"})
	wantResult(t, res, false, "committed")
}

// TestBashAskGitWritable (issue 47 item 1): where the Env can ask
// (AskGitWritable, the terminal), a command that failed on the read-only
// .git is asked about, with the command; yes runs it once more with .git
// writable and the model gets that run, headed by a line saying why; no
// keeps the first result and its hint. Other failures are not asked
// about, and the next call is confined as before.
func TestBashAskGitWritable(t *testing.T) {
	const commit = "git commit --allow-empty -qm ASKED && echo committed"
	cases := []struct {
		name, command string
		answer        bool
		asked, landed bool
		want          string
	}{
		{"yes", commit, true, true, true, "[reins: the first run failed because .git is read-only"},
		{"no", commit, false, true, false, "note: .git is read-only to sandboxed commands"},
		{"other failure", "echo nope; exit 3", true, false, false, "[exit code 3]"},
		{"success", "echo fine", true, false, false, "fine"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t, WorkspaceWrite)
			testutil.Git(t, env.Workspace, "init", "-q")
			testutil.Git(t, env.Workspace, "config", "user.email", "t@e")
			testutil.Git(t, env.Workspace, "config", "user.name", "t")
			var asked []string
			answer := c.answer
			env.AskGitWritable = func(_ context.Context, command string) bool {
				asked = append(asked, command)
				return answer
			}
			res := call(t, env, "bash", map[string]any{"command": c.command})
			if got := len(asked) == 1 && asked[0] == c.command; got != c.asked || len(asked) > 1 {
				t.Errorf("asked %q, want asked=%v", asked, c.asked)
			}
			if !strings.Contains(res.Content, c.want) {
				t.Errorf("result lacks %q:\n%s", c.want, res.Content)
			}
			log, _ := exec.Command("git", "-C", env.Workspace, "log", "--format=%s").CombinedOutput()
			if landed := strings.Contains(string(log), "ASKED"); landed != c.landed {
				t.Errorf("commit landed=%v, want %v:\n%s", landed, c.landed, res.Content)
			}
			if c.landed {
				if res.IsError || strings.Contains(res.Content, "note: .git is read-only") || !strings.Contains(res.Content, "committed") {
					t.Errorf("the second run's result:\n%s", res.Content)
				}
				// Once: the next call is confined as before and asks again.
				asked, answer = nil, false
				again := call(t, env, "bash", map[string]any{"command": "git commit --allow-empty -qm TWICE"})
				if len(asked) != 1 || !strings.Contains(again.Content, "note: .git is read-only") {
					t.Errorf("the next call: asked %q:\n%s", asked, again.Content)
				}
			}
		})
	}
}
