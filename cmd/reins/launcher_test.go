package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/testutil"
)

// launcher lays out the npm package's launcher as npm installs it —
// node_modules/reins-cli/bin/reins.js beside node_modules/reins-cli-OS-CPU
// — with this test binary as the platform package's reins (REINS_AS_MAIN),
// and returns the command that runs it with args under node.
func launcher(t *testing.T, home string, args ...string) *exec.Cmd {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		testutil.MissingPeer(t, "node not found")
	}
	cpu := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	nm := filepath.Join(t.TempDir(), "node_modules")
	plat := filepath.Join(nm, "reins-cli-"+runtime.GOOS+"-"+cpu)
	for _, d := range []string{filepath.Join(nm, "reins-cli", "bin"), filepath.Join(plat, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	js, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "packaging", "npm", "reins-cli", "bin", "reins.js"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(nm, "reins-cli", "bin", "reins.js"), js, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plat, "package.json"), []byte(`{"name": "reins-cli-`+runtime.GOOS+"-"+cpu+`", "version": "0.0.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(os.Args[0], filepath.Join(plat, "bin", "reins")); err != nil {
		t.Fatal(err)
	}
	base := reinsCmd(t, home)
	cmd := exec.Command(node, append([]string{filepath.Join(nm, "reins-cli", "bin", "reins.js")}, args...)...)
	cmd.Env, cmd.Dir = base.Env, base.Dir
	return cmd
}

// output is a file a process writes to directly: no copying goroutine
// that a surviving grandchild holding the descriptor would keep Wait on,
// and readable while the process runs.
type output struct{ f *os.File }

func outFile(t *testing.T) output {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return output{f}
}

func (o output) String() string {
	b, _ := os.ReadFile(o.f.Name())
	return string(b)
}

// childOf is the pid of pid's one child, waited for (generously).
func childOf(t *testing.T, pid int) int {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if f := strings.Fields(string(b)); len(f) > 0 {
			c, _ := strconv.Atoi(f[0])
			return c
		}
	}
	t.Fatalf("the launcher %d started no reins", pid)
	return 0
}

// gone reports whether pid has ended (no process, or a zombie nobody
// reaped yet).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || strings.HasPrefix(s[i+1:], " Z") || strings.HasPrefix(s[i+1:], " X")
}

// TestLauncherDiesReinsEnds (issue 48): killing the npm launcher with
// SIGKILL — it can forward nothing — still ends reins: a `reins run`
// waiting on a stalled model and a `reins view` (reins-extra, by exec)
// serving.
func TestLauncherDiesReinsEnds(t *testing.T) {
	useExtraHelper(t)
	url, srv := startMock(t, "fallback:\n  fault: stall\n")
	for _, tc := range []struct {
		name  string
		args  []string
		ready func(home string) bool
	}{
		{"run", []string{"run", "-m", "openai/test", "--base-url", url, "wait"}, func(string) bool { return srv.InFlight() > 0 }},
		{"view", []string{"view", "--no-open", "--port", "0"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			cmd := launcher(t, home, tc.args...)
			stderr := outFile(t)
			cmd.Stdout, cmd.Stderr = stderr.f, stderr.f
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			reins := childOf(t, cmd.Process.Pid)
			t.Cleanup(func() { syscall.Kill(reins, syscall.SIGKILL) })
			// Killed once it is doing its work: the model asked, or the
			// page served (its address on stderr).
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if tc.ready != nil && tc.ready(home) || tc.ready == nil && strings.Contains(stderr.String(), "http://") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("reins never got going; output:\n%s", stderr.String())
				}
			}
			cmd.Process.Kill()
			cmd.Wait()
			for deadline := time.Now().Add(60 * time.Second); !gone(reins); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("reins %d outlived its launcher by a minute; output:\n%s", reins, stderr.String())
				}
			}
		})
	}
}

// TestLauncherForwardsSignals (issue 48): SIGINT and SIGTERM sent to the
// launcher alone reach reins, the launcher waits for it (reins's last line
// comes first) and exits with its status; reins killed by a signal, the
// launcher dies of the same one.
func TestLauncherForwardsSignals(t *testing.T) {
	url, srv := startMock(t, "fallback:\n  fault: stall\n")
	for _, tc := range []struct {
		sig    syscall.Signal
		toKid  bool
		status int
		line   string
	}{
		{syscall.SIGINT, false, 130, "interrupted; to continue this session"},
		{syscall.SIGTERM, false, 143, ""},
		{syscall.SIGHUP, false, -1, ""}, // reins run does not catch SIGHUP: it dies of it, and so does the launcher
		{syscall.SIGKILL, true, -1, ""},
	} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			n := srv.InFlight()
			cmd := launcher(t, t.TempDir(), "run", "-m", "openai/test", "--base-url", url, "wait")
			stderr := outFile(t)
			cmd.Stderr = stderr.f
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			reins := childOf(t, cmd.Process.Pid)
			t.Cleanup(func() { syscall.Kill(reins, syscall.SIGKILL) })
			for deadline := time.Now().Add(60 * time.Second); srv.InFlight() <= n; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("reins never asked the model; stderr:\n%s", stderr.String())
				}
			}
			to := cmd.Process.Pid
			if tc.toKid {
				to = reins
			}
			if err := syscall.Kill(to, tc.sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("launcher: %v, want an exit status; stderr:\n%s", err, stderr.String())
			}
			ws := ee.Sys().(syscall.WaitStatus)
			switch {
			case tc.status >= 0 && (ws.Signaled() || ws.ExitStatus() != tc.status):
				t.Errorf("launcher after %v: %v, want exit %d; stderr:\n%s", tc.sig, err, tc.status, stderr.String())
			case tc.status < 0 && (!ws.Signaled() || ws.Signal() != tc.sig):
				t.Errorf("launcher after %v: %v, want killed by %v; stderr:\n%s", tc.sig, err, tc.sig, stderr.String())
			}
			if tc.line != "" && !strings.Contains(stderr.String(), tc.line) {
				t.Errorf("stderr %q, want reins's last line %q before the launcher exited", stderr.String(), tc.line)
			}
			if !gone(reins) {
				t.Errorf("reins %d is still running after its launcher exited", reins)
			}
		})
	}
}
