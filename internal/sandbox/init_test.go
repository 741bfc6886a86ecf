//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/sandbox/tinyinit"
	"github.com/reinsdev/reins/internal/testutil"
)

// TestInitDuties: the container's init, the small one
// (internal/sandbox/tinyinit) and the Go one it replaced (kept where the
// domain proxy runs, and if the small one cannot be exec'd): the
// program's exit status and its death by a signal come back as they were;
// SIGTERM sent to the supervisor reaches the program's group; orphans
// are reaped, not left as zombies; pid 1 is the init it should be, and
// the small one is not dumpable and holds a few pages.
func TestInitDuties(t *testing.T) {
	requireLandlock(t)
	for _, init := range []string{"small", "go"} {
		t.Run(init, func(t *testing.T) {
			if init == "go" {
				t.Setenv(goInitEnv, "1")
			} else if tinyinit.Image() == nil {
				t.Skip("no small init on this architecture (tinyinit.go): the Go init is the only one")
			}
			ws := t.TempDir()
			p := Policy{Mode: WorkspaceWrite, Workspace: ws}
			endsAsTheProgram(t, p, ws)
			// The program starts before the stage hands over to the
			// small init: wait (bounded) until it has.
			out, _ := runEnv(t, p, ws, nil, `w=`+map[string]string{"small": "6000", "go": "0"}[init]+`
while [ "$w" -gt 0 ] && [ "$(cat /proc/1/comm)" != reins-init ]; do w=$((w-1)); sleep 0.01; done
for i in $(seq 40); do (sleep 0.01 &) ; done; sleep 1
z=0; for s in /proc/[0-9]*/stat; do read -r l < "$s" 2>/dev/null || continue; case "${l##*) }" in Z*) z=$((z+1));; esac; done; echo "zombies=$z"
echo "comm=$(cat /proc/1/comm)"; grep -E '^(VmRSS|Threads):' /proc/1/status | tr -d ' \t' | sed 's/^/init-/'
cat /proc/1/environ >/dev/null 2>&1 && echo ENVIRON-READ || echo environ-refused`)
			if !strings.Contains(out, "zombies=0\n") {
				t.Errorf("orphans were left unreaped:\n%s", out)
			}
			if !strings.Contains(out, "environ-refused") {
				t.Errorf("the init's environ was readable (dumpable):\n%s", out)
			}
			switch init {
			case "small":
				if !strings.Contains(out, "comm=reins-init\n") || !strings.Contains(out, "init-Threads:1\n") {
					t.Errorf("pid 1 is not the small init:\n%s", out)
				}
				// A few pages of code and stack, against over 1 MiB
				// for any Go process (BENCHMARKS.md).
				if kb := initRSS(out); kb <= 0 || kb > 256 {
					t.Errorf("the small init holds %d kB:\n%s", kb, out)
				}
			case "go":
				if strings.Contains(out, "comm=reins-init") {
					t.Errorf("pid 1 is the small init with %s set:\n%s", goInitEnv, out)
				}
			}
			forwardTerm(t, p, ws)
		})
	}
}

// endsAsTheProgram: the program's exit status, its death by a signal and
// by a fault (as a shell says it) come back through the supervisor and
// the init.
func endsAsTheProgram(t *testing.T, p Policy, ws string) {
	t.Helper()
	if out, code := runEnv(t, p, ws, nil, `exit 7`); code != 7 {
		t.Errorf("exit 7: status %d\n%s", code, out)
	}
	st := runState(t, p, ws, `kill -TERM $$`)
	if ws, _ := st.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("a program killed by SIGTERM: %v", st)
	}
	if st := runState(t, p, ws, `kill -SEGV $$`); st.ExitCode() != 128+11 {
		t.Errorf("a program killed by SIGSEGV: %v, want exit 139 as a shell says", st)
	}
}

// initRSS is the init-VmRSS line's kB in out, or -1.
func initRSS(out string) int {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "init-VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(v, "kB"))
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// runState runs script confined and returns how it ended.
func runState(t *testing.T, p Policy, dir, script string) *os.ProcessState {
	t.Helper()
	cmd, err := Command(p, "bash", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	_ = cmd.Run()
	return cmd.ProcessState
}

// forwardTerm: SIGTERM to the supervisor reaches the program, which traps
// it and ends with its own status.
func forwardTerm(t *testing.T, p Policy, ws string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, err := Command(p, "bash", "-c", `trap 'echo got-term; exit 5' TERM; echo ready; while :; do sleep 0.05; done`)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Dir, cmd.Stdout, cmd.Stderr = ws, w, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	stop := context.AfterFunc(ctx, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer stop()
	sc := bufio.NewScanner(r)
	if !sc.Scan() || sc.Text() != "ready" {
		t.Fatalf("the program did not start: %q %s", sc.Text(), out.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for sc.Scan() {
		rest = append(rest, sc.Text())
	}
	_ = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatal("SIGTERM did not end the program within 2 minutes")
	}
	if strings.Join(rest, "\n") != "got-term" || cmd.ProcessState.ExitCode() != 5 {
		t.Errorf("SIGTERM was not forwarded: output %q, %v, stderr %s", rest, cmd.ProcessState, out.String())
	}
}

// TestSmallInitKeepsTheMark: the small init carries the environment of
// the stage it replaced, so what marks every process of a test run
// (testutil.MarkEnv, read by scripts/check-orphans.sh) marks it too: an
// init without it would outlive a test unseen. Read as root (the init is
// not dumpable).
func TestSmallInitKeepsTheMark(t *testing.T) {
	requireLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("reading the undumpable init's environ needs root (CAP_SYS_PTRACE)")
	}
	if tinyinit.Image() == nil {
		t.Skip("no small init on this architecture")
	}
	mark := testutil.MarkEnv + "=tinyinit-" + strconv.Itoa(os.Getpid())
	t.Setenv(testutil.MarkEnv, strings.TrimPrefix(mark, testutil.MarkEnv+"="))
	ws := t.TempDir()
	cmd := startSleep(t, ws)
	// The supervisor's child becomes reins-init once the program runs.
	init := 0
	for deadline := time.Now().Add(60 * time.Second); init == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the small init did not take over within 60 s")
		}
		for _, k := range childrenOf(cmd.Process.Pid) {
			if b, _ := os.ReadFile("/proc/" + strconv.Itoa(k) + "/comm"); string(b) == "reins-init\n" {
				init = k
			}
		}
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(init) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Split(string(b), "\x00"), mark) {
		t.Errorf("the small init (pid %d) has no %s", init, mark)
	}
}
