//go:build linux

package sandbox

import (
	"bytes"
	"github.com/reinsdev/reins/proc"
	"net"
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
		{"read outside", `cat /etc/passwd > /dev/null && touch "$TMPDIR/ok" && test -f "$TMPDIR/ok"`, nil,
			want{ReadOnly: true, WorkspaceWrite: true, FullAccess: true}},
		{"read another folder of /tmp (the private /tmp hides it)", `cat "$OUT/secret.txt"`, nil,
			want{ReadOnly: false, WorkspaceWrite: false, FullAccess: true}},
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

// TestNetworkDenied: sandbox.network: off cuts TCP off a server of the
// host's loopback (the container: a network namespace of its own; the
// fallback: Landlock's connect control); on leaves it reachable.
func TestNetworkDenied(t *testing.T) {
	requireLandlock(t)
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	script := `exec 3<>/dev/tcp/127.0.0.1/` + port + ` && echo connected`
	for _, noNS := range []bool{false, true} {
		out, _ := run(t, Policy{Mode: WorkspaceWrite, Workspace: dir, DenyNetwork: true, NoNamespaces: noNS}, dir, script)
		if strings.Contains(out, "connected") {
			t.Errorf("noNamespaces=%v: connected to the host's loopback with the network off:\n%s", noNS, out)
		}
		out, _ = run(t, Policy{Mode: WorkspaceWrite, Workspace: dir, NoNamespaces: noNS}, dir, script)
		if !strings.Contains(out, "connected") {
			t.Errorf("noNamespaces=%v: not connected although the network is on:\n%s", noNS, out)
		}
	}
}

// TestSetsidDescendantsDieWithTheChild: when the child ends, a descendant
// that left its session and group is killed too.
func TestSetsidDescendantsDieWithTheChild(t *testing.T) {
	dir := t.TempDir()
	out, code := run(t, Policy{Mode: WorkspaceWrite, Workspace: dir}, dir,
		`setsid -f bash -c 'echo $$ > pid; exec sleep 60.417'; for i in $(seq 50); do test -s pid && break; sleep 0.05; done`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	assertGoneMarked(t, "60.417")
}

// assertGoneMarked fails when a process whose command line holds marker is
// still alive 2 s from now. A pid the child prints is its PID namespace's,
// not ours, so the daemons are found by a marker in their arguments.
func assertGoneMarked(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		pids := marked(marker)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("pids %v still alive 2 s after the child ended", pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func marked(marker string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Contains(b, []byte("sleep\x00"+marker)) && alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	st, ok := proc.ParseStat(string(b))
	return ok && st.Live()
}

func itoa(i int) string { return strconv.Itoa(i) }

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
			// Landlock alone: the kill is refused. In the container the
			// parent is the namespace's init, which a process inside cannot
			// kill (the kernel drops the signal), and the supervisor is not
			// even visible. Either way the daemon must die with the command.
			for _, noNS := range []bool{true, false} {
				marker := "61.7" + strconv.FormatBool(noNS)[:1]
				out, _ := run(t, Policy{Mode: mode, Workspace: dir, NoNamespaces: noNS}, dir,
					`setsid -f bash -c 'exec sleep `+marker+`'; sleep 0.2; kill -9 $PPID && echo killed-watcher || echo kill-refused`)
				if noNS && !strings.Contains(out, "kill-refused") {
					t.Errorf("the confined command could signal its supervisor:\n%s", out)
				}
				assertGoneMarked(t, marker)
			}
		})
	}
}
