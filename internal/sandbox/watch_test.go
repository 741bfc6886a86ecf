//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/sandbox/tinyinit"
)

// TestSupervisorDuties: the supervisor of a container child, the small
// watch (tinyinit's watch.go) that takes the Go supervisor's place once
// the stage runs, and the Go one (the fallback, and where the domain
// proxy runs): the program's exit status, its death by a signal and by a
// fault come back as before; SIGTERM reaches the program, and one that
// ignores it is killed once the grace has passed; a protected path the
// program created is removed, and said so; the program's TMPDIR is
// writable (the container's own /tmp with the watch); when reins dies
// (SIGKILL of the supervisor's parent) nothing is left; SIGTERM sent
// while the Go supervisor hands over never leaves a process behind.
func TestSupervisorDuties(t *testing.T) {
	requireLandlock(t)
	for _, sup := range []string{"watch", "go"} {
		t.Run(sup, func(t *testing.T) {
			if sup == "go" {
				t.Setenv(goSupervisorEnv, "1")
			} else if tinyinit.WatchImage() == nil {
				t.Skip("no small watch on this architecture (tinyinit's watch.go): the Go supervisor waits")
			}
			ws := t.TempDir()
			p := Policy{Mode: WorkspaceWrite, Workspace: ws, TermGrace: 300 * time.Millisecond}

			// What waits beside the program.
			cmd := startSleepPolicy(t, p, ws, "62.1")
			comm := waitComm(t, cmd.Process.Pid, "reins-watch", sup == "watch")
			switch sup {
			case "watch":
				if comm != "reins-watch" {
					t.Errorf("the supervisor is %q, not the watch", comm)
				}
				if kb := rssKB(cmd.Process.Pid); kb <= 0 || kb > 256 {
					t.Errorf("the watch holds %d kB", kb)
				}
			case "go":
				if comm == "reins-watch" {
					t.Errorf("the watch runs with %s set", goSupervisorEnv)
				}
			}
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			assertGoneWithin(t, "62.1", time.Minute)

			endsAsTheProgram(t, p, ws)
			forwardTerm(t, p, ws)
			ignoreTerm(t, p, ws)

			// A protected name that was missing, created by the program.
			out, _ := runEnv(t, p, ws, nil, `mkdir .vscode && echo '{}' > .vscode/settings.json && echo made`)
			if !strings.Contains(out, "made") || !strings.Contains(out, "removed .vscode") {
				t.Errorf("the program's .vscode was not removed and said so:\n%s", out)
			}
			if _, err := os.Lstat(filepath.Join(ws, ".vscode")); err == nil {
				t.Error(".vscode is still there")
			}

			out, _ = runEnv(t, p, ws, nil, `echo "tmp=$TMPDIR"; echo x > "$TMPDIR/x" && echo wrote`)
			if !strings.Contains(out, "wrote") {
				t.Errorf("TMPDIR is not writable:\n%s", out)
			}
			if sup == "watch" && !strings.Contains(out, "tmp=/tmp\n") {
				t.Errorf("with the watch, TMPDIR is the container's own /tmp:\n%s", out)
			}

			parentDies(t, p, ws, "62.2")
			parentDiesAtOnce(t, p, ws, "62.4")
			handOverStorm(t, p, ws, "62.3")
		})
	}
}

// startSleepPolicy starts `sleep marker` confined by p, in its own group.
func startSleepPolicy(t *testing.T, p Policy, ws, marker string) *exec.Cmd {
	t.Helper()
	cmd, err := Command(p, "sleep", marker)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Dir = ws
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd
}

// waitComm waits (generously) until the program runs (its sleep is
// there) and, when wait is set, until pid's name is want; it returns
// pid's name then.
func waitComm(t *testing.T, pid int, want string, wait bool) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		comm := strings.TrimSpace(string(b))
		if (!wait || comm == want) && len(childrenOf(pid)) > 0 {
			return comm
		}
		if time.Now().After(deadline) {
			return comm
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// rssKB is pid's VmRSS in kB, or -1.
func rssKB(pid int) int {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// assertGoneWithin is assertGoneMarked with a bound of its own.
func assertGoneWithin(t *testing.T, marker string, bound time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(bound); len(marked(marker)) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			pids := marked(marker)
			ps, _ := exec.Command("ps", "-eo", "pid,ppid,pgid,stat,comm,args").Output()
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("pids %v (sleep %s) still alive %v on:\n%s", pids, marker, bound, ps)
		}
	}
}

// ignoreTerm: a program that ignores SIGTERM is killed once the grace has
// passed, and reported killed by SIGKILL.
func ignoreTerm(t *testing.T, p Policy, ws string) {
	t.Helper()
	cmd, err := Command(p, "bash", "-c", `trap '' TERM; echo ready; while :; do sleep 0.05; done`)
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd.Dir, cmd.Stdout = ws, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }()
	if b := make([]byte, 6); readFull(r, b) != nil || string(b) != "ready\n" {
		t.Fatal("the program never said ready")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("a program that ignores SIGTERM outlived the grace by minutes")
	}
	if ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("a program killed after the grace: %v", cmd.ProcessState)
	}
}

func readFull(r *os.File, b []byte) error {
	for n := 0; n < len(b); {
		m, err := r.Read(b[n:])
		if err != nil {
			return err
		}
		n += m
	}
	return nil
}

// parentDies: the supervisor's parent (reins) is killed with SIGKILL
// while the program runs; nothing is left.
func parentDies(t *testing.T, p Policy, ws, marker string) {
	t.Helper()
	mid := viaShell(t, p, marker)
	mid.Dir = ws
	mid.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := mid.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); !sleeping(marker); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(-mid.Process.Pid, syscall.SIGKILL)
			_ = mid.Wait()
			t.Fatal("the program never ran")
		}
	}
	_ = mid.Process.Kill()
	_ = mid.Wait()
	assertGoneWithin(t, marker, time.Minute)
}

// viaShell is a shell that starts `sleep marker` under the supervisor
// with policy p (as Argv writes it, with the shell's pid as the
// supervisor's parent) and waits: the shell stands for reins.
func viaShell(t *testing.T, p Policy, marker string) *exec.Cmd {
	t.Helper()
	exe, argv, err := Argv(p, "sleep", marker)
	if err != nil {
		t.Fatal(err)
	}
	own := `"parent":` + strconv.Itoa(os.Getpid())
	if !strings.Contains(argv[1], own) {
		t.Fatalf("Argv did not name its caller as the parent: %s", argv[1])
	}
	argv[1] = strings.Replace(argv[1], own, `"parent":PARENT`, 1)
	return exec.Command("sh", append([]string{"-c", `exe=$1; h=$2; pol="${3%%PARENT*}$$${3#*PARENT}"; shift 3; "$exe" "$h" "$pol" "$@" & wait`, "sh", exe}, argv...)...)
}

// sleeping reports whether `sleep marker` itself runs (not only a
// process whose command line names it).
func sleeping(marker string) bool {
	for _, pid := range marked(marker) {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); string(b) == "sleep\n" {
			return true
		}
	}
	return false
}

// parentDiesAtOnce: the supervisor's parent is killed at once after it
// started the supervisor, at moments spread over the supervisor's own
// start (before it reads its parent's pid, before the program runs): no
// program is left running, 20 times.
func parentDiesAtOnce(t *testing.T, p Policy, ws, marker string) {
	t.Helper()
	for i := range 20 {
		mid := viaShell(t, p, marker)
		mid.Dir = ws
		if err := mid.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i) * time.Millisecond)
		_ = mid.Process.Kill()
		_ = mid.Wait()
	}
	assertGoneWithin(t, marker, time.Minute)
}

// handOverStorm: SIGTERM to the supervisor at once after its start, 30
// times, at moments spread over the hand-over: every run ends, and
// leaves no process behind.
func handOverStorm(t *testing.T, p Policy, ws, marker string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for i := range 30 {
		cmd, err := Command(p, "sleep", marker)
		if err != nil {
			t.Fatal(err)
		}
		var errb bytes.Buffer
		cmd.Dir, cmd.Stderr = ws, &errb
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i%10) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Fatalf("run %d outlived its SIGTERM by minutes", i)
		}
	}
	assertGoneWithin(t, marker, time.Minute)
}
