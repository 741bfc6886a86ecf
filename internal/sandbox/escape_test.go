package sandbox

import (
	"bytes"
	"fmt"
	"github.com/reinsdev/reins/internal/proc"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// run runs a bash script under the supervisor with policy p and returns its
// combined output and exit code.
func run(t *testing.T, p Policy, dir, script string) (string, int) {
	t.Helper()
	cmd, err := Command(p, "bash", "-c", script)
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	var out bytes.Buffer
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("run: %v", err)
	}
	return out.String(), code
}

func requireLandlock(t *testing.T) {
	t.Helper()
	if err := Check(Policy{Mode: ReadOnly}); err != nil {
		t.Fatalf("this suite needs Landlock (the CI kernel has ABI 7): %v", err)
	}
}

// TestEscapes is the escape suite of the permission modes (docs/sandbox.md) for a shell
// command: each row is an attempt, each column the outcome per mode.
func TestEscapes(t *testing.T) {
	requireLandlock(t)
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{ws, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(outside, "secret.txt")

	// allowed[mode] is whether the attempt succeeds.
	type want map[Mode]bool
	cases := []struct {
		name   string
		script string // $OUT is the outside directory, $WS the workspace
		check  func(t *testing.T) bool
		want   want
	}{
		{"write outside the workspace", `echo x > "$OUT/new"`, exists(filepath.Join(outside, "new")),
			want{ReadOnly: false, WorkspaceWrite: false, FullAccess: true}},
		{"write inside the workspace", `echo x > "$WS/new"`, exists(filepath.Join(ws, "new")),
			want{ReadOnly: false, WorkspaceWrite: true, FullAccess: true}},
		{"write the private temporary directory", `echo x > "$TMPDIR/t" && cat "$TMPDIR/t" && touch "$WS/tmp-ok"`, exists(filepath.Join(ws, "tmp-ok")),
			want{ReadOnly: false /* the marker is in the workspace */, WorkspaceWrite: true, FullAccess: true}},
		{"truncate a file outside", `truncate -s 0 "$OUT/secret.txt"`, emptied(secret),
			want{ReadOnly: false, WorkspaceWrite: false, FullAccess: true}},
		{"symlink in the workspace to outside", `ln -s "$OUT" "$WS/link" ; echo x > "$WS/link/via-link"`, exists(filepath.Join(outside, "via-link")),
			want{ReadOnly: false, WorkspaceWrite: false, FullAccess: true}},
		{"/proc/self/root path", `echo x > "/proc/self/root$OUT/via-proc"`, exists(filepath.Join(outside, "via-proc")),
			want{ReadOnly: false, WorkspaceWrite: false, FullAccess: true}},
		{"hard link to a file outside, then write", `ln "$OUT/secret.txt" "$WS/hard" && echo pwned > "$WS/hard"`, contains(secret, "pwned"),
			want{ReadOnly: false, WorkspaceWrite: false, FullAccess: true}},
		{"move a file out of the workspace", `echo x > "$WS/m" ; mv "$WS/m" "$OUT/moved"`, exists(filepath.Join(outside, "moved")),
			want{ReadOnly: false, WorkspaceWrite: false, FullAccess: true}},
		{"move a file inside the workspace", `mkdir -p "$WS/a" "$WS/b" && echo x > "$WS/a/f" && mv "$WS/a/f" "$WS/b/f"`, exists(filepath.Join(ws, "b", "f")),
			want{ReadOnly: false, WorkspaceWrite: true, FullAccess: true}},
		{"setsid child writes outside", `setsid -f bash -c 'echo x > "$OUT/setsid"'; sleep 0.3`, exists(filepath.Join(outside, "setsid")),
			want{ReadOnly: false, WorkspaceWrite: false, FullAccess: true}},
		{"read outside", `cat "$OUT/secret.txt" > /dev/null && touch "$TMPDIR/ok" && test -f "$TMPDIR/ok"`, nil,
			want{ReadOnly: true, WorkspaceWrite: true, FullAccess: true}},
		{"write /dev/null", `echo x > /dev/null`, nil,
			want{ReadOnly: true, WorkspaceWrite: true, FullAccess: true}},
	}
	for _, mode := range []Mode{ReadOnly, WorkspaceWrite, FullAccess} {
		for _, c := range cases {
			t.Run(string(mode)+"/"+c.name, func(t *testing.T) {
				// Fresh state for every cell.
				for _, d := range []string{ws, outside} {
					os.RemoveAll(d)
					os.Mkdir(d, 0o755)
				}
				if err := os.WriteFile(secret, []byte("secret\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				script := "export OUT=" + shq(outside) + " WS=" + shq(ws) + "\n" + c.script
				out, code := run(t, Policy{Mode: mode, Workspace: ws}, ws, script)
				got := code == 0
				if c.check != nil {
					got = c.check(t)
				}
				if got != c.want[mode] {
					t.Errorf("succeeded=%v, want %v (exit %d)\n%s", got, c.want[mode], code, out)
				}
			})
		}
	}
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func exists(p string) func(*testing.T) bool {
	return func(*testing.T) bool { _, err := os.Lstat(p); return err == nil }
}

func emptied(p string) func(*testing.T) bool {
	return func(*testing.T) bool { fi, err := os.Stat(p); return err == nil && fi.Size() == 0 }
}

func contains(p, s string) func(*testing.T) bool {
	return func(*testing.T) bool { b, _ := os.ReadFile(p); return bytes.Contains(b, []byte(s)) }
}

// TestNetworkDenied: sandbox.network: false denies TCP connect.
func TestNetworkDenied(t *testing.T) {
	requireLandlock(t)
	dir := t.TempDir()
	script := `exec 3<>/dev/tcp/127.0.0.1/9 && echo connected`
	out, _ := run(t, Policy{Mode: WorkspaceWrite, Workspace: dir, DenyNetwork: true}, dir, script)
	if !strings.Contains(out, "Permission denied") {
		t.Errorf("connect not denied by Landlock:\n%s", out)
	}
	out, _ = run(t, Policy{Mode: WorkspaceWrite, Workspace: dir}, dir, script)
	if strings.Contains(out, "Permission denied") {
		t.Errorf("connect denied although the network is allowed:\n%s", out)
	}
}

// TestSetsidDescendantsDieWithTheChild: when the child ends, a descendant
// that left its session and group is killed too.
func TestSetsidDescendantsDieWithTheChild(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	out, code := run(t, Policy{Mode: WorkspaceWrite, Workspace: dir}, dir,
		`setsid -f bash -c 'echo $$ > pid; exec sleep 60'; for i in $(seq 50); do test -s pid && break; sleep 0.05; done`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	assertGone(t, pidFile)
}

func assertGone(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("no pid written: %v", err)
	}
	var pid int
	if _, err := fmtSscan(strings.TrimSpace(string(b)), &pid); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("pid %d still alive 2 s after the child ended", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	st, ok := proc.ParseStat(string(b))
	return ok && st.Live()
}

func fmtSscan(s string, pid *int) (int, error) { return fmt.Sscan(s, pid) }
func itoa(i int) string                        { return strconv.Itoa(i) }

// TestCannotKillTheSupervisor: a confined command that kills its watcher
// and leaves a setsid daemon behind gets neither: the supervisor is outside
// the sandbox (Landlock's signal scope), so the kill fails and the daemon
// dies with the command.
func TestCannotKillTheSupervisor(t *testing.T) {
	requireLandlock(t)
	if ABI() < signalScopeABI {
		t.Fatalf("signal scoping needs Landlock ABI %d; this kernel has %d", signalScopeABI, ABI())
	}
	for _, mode := range []Mode{ReadOnly, WorkspaceWrite} {
		t.Run(string(mode), func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "pid")
			// Under read-only the daemon cannot write the workspace: the pid
			// goes through the output instead.
			out, _ := run(t, Policy{Mode: mode, Workspace: dir}, dir,
				`setsid -f bash -c 'echo daemon=$$; exec sleep 60'; sleep 0.2; kill -9 $PPID && echo killed-watcher || echo kill-refused`)
			if !strings.Contains(out, "kill-refused") {
				t.Errorf("the confined command could signal its supervisor:\n%s", out)
			}
			_, after, ok := strings.Cut(out, "daemon=")
			if !ok {
				t.Fatalf("no daemon pid in output:\n%s", out)
			}
			pid, _, _ := strings.Cut(after, "\n")
			if err := os.WriteFile(pidFile, []byte(pid), 0o644); err != nil {
				t.Fatal(err)
			}
			assertGone(t, pidFile)
		})
	}
}
