//go:build linux

package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/proc"
)

// TestStageGOMAXPROCSNotLeaked: the confine stage runs with GOMAXPROCS=1
// (stageEnv), but the program sees the caller's GOMAXPROCS exactly — set,
// set empty or unset — and no marker, in the container and in the
// Landlock-only fallback.
func TestStageGOMAXPROCSNotLeaked(t *testing.T) {
	requireLandlock(t)
	ws := t.TempDir()
	base := []string{}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "GOMAXPROCS" && k != stageProcsEnv {
			base = append(base, kv)
		}
	}
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"unset", nil, "[unset]"},
		{"set", []string{"GOMAXPROCS=7"}, "[7]"},
		{"empty", []string{"GOMAXPROCS="}, "[]"},
		{"marker planted by the caller", []string{"GOMAXPROCS=3", stageProcsEnv + "=1:99"}, "[3]"},
	} {
		for _, noNS := range []bool{false, true} {
			env := append(append([]string{}, base...), tc.env...)
			out, code := runEnv(t, Policy{Mode: WorkspaceWrite, Workspace: ws, NoNamespaces: noNS}, ws, env,
				`echo "[${GOMAXPROCS-unset}]"; env | grep -c `+stageProcsEnv+` || true`)
			want := tc.want + "\n0\n"
			if code != 0 || out != want {
				t.Errorf("%s, noNamespaces=%v: exit %d, output %q, want %q", tc.name, noNS, code, out, want)
			}
		}
	}
}

// TestStageRunsWithOneP: the confine stage was started with GOMAXPROCS=1
// (read from its /proc/PID/environ, the block it was started with, by
// root: the init is not dumpable). It is the container's init where the
// Go one stays (the domain proxy runs in it): here with goInitEnv, as the
// small init replaces it otherwise.
func TestStageRunsWithOneP(t *testing.T) {
	requireLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("reading the undumpable init's environ needs root (CAP_SYS_PTRACE)")
	}
	t.Setenv(goInitEnv, "1")
	ws := t.TempDir()
	cmd := startSleep(t, ws)
	// The stage is the supervisor's child; wait until it has a child of
	// its own (the program), so its set-up is done.
	var stage int
	for deadline := time.Now().Add(30 * time.Second); stage == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the confine stage and its program did not appear in 30 s")
		}
		kids := childrenOf(cmd.Process.Pid)
		if len(kids) == 1 && len(childrenOf(kids[0])) > 0 {
			stage = kids[0]
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(stage) + "/environ")
	if errors.Is(err, os.ErrPermission) {
		t.Skip("this kernel refuses root the undumpable init's environ")
	}
	if err != nil {
		t.Fatal(err)
	}
	vars := strings.Split(string(b), "\x00")
	found := false
	for _, kv := range vars {
		if kv == "GOMAXPROCS=1" {
			found = true
		}
	}
	if !found {
		t.Fatalf("the confine stage (pid %d) was not started with GOMAXPROCS=1", stage)
	}
}

// startSleep starts a confined `sleep 60` in ws, in a group of its own
// that the test's end kills.
func startSleep(t *testing.T, ws string) *exec.Cmd {
	t.Helper()
	return startSleepPolicy(t, Policy{Mode: WorkspaceWrite, Workspace: ws}, ws, "60")
}

// childrenOf lists the live children of pid, from /proc.
func childrenOf(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if st, ok := proc.ParseStat(string(data)); ok && st.PPID == pid && st.Live() {
			out = append(out, n)
		}
	}
	return out
}

// TestSupervisorGOMAXPROCS: Command starts the supervisor with
// GOMAXPROCS=1 when the caller leaves the environment to it (bash's
// case), and the program still sees the caller's GOMAXPROCS exactly —
// set, empty, unset — and no marker; a caller that sets the environment
// itself keeps its value even with a stray marker in it. In the container
// and in the Landlock-only fallback.
func TestSupervisorGOMAXPROCS(t *testing.T) {
	requireLandlock(t)
	ws := t.TempDir()
	script := `echo "[${GOMAXPROCS-unset}]"; env | grep -c "_GOMAXPROCS=" || true`
	for _, tc := range []struct {
		name   string
		own    map[string]string // reins's own environment (cmd.Env left nil)
		caller []string          // or the caller's cmd.Env, added to reins's
		want   string
	}{
		{"unset", nil, nil, "[unset]"},
		{"set", map[string]string{"GOMAXPROCS": "7"}, nil, "[7]"},
		{"empty", map[string]string{"GOMAXPROCS": ""}, nil, "[]"},
		{"stray marker in reins's environment", map[string]string{"GOMAXPROCS": "3", supervisorProcsEnv: "1:99"}, nil, "[3]"},
		{"stray marker in the caller's", nil, []string{"GOMAXPROCS=3", supervisorProcsEnv + "=1:99"}, "[3]"},
	} {
		for _, noNS := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				t.Setenv("GOMAXPROCS", "")
				os.Unsetenv("GOMAXPROCS")
				t.Setenv(supervisorProcsEnv, "")
				os.Unsetenv(supervisorProcsEnv)
				for k, v := range tc.own {
					t.Setenv(k, v)
				}
				cmd, err := Command(Policy{Mode: WorkspaceWrite, Workspace: ws, NoNamespaces: noNS}, "bash", "-c", script)
				if err != nil {
					t.Fatal(err)
				}
				if tc.caller != nil {
					cmd.Env = append(os.Environ(), tc.caller...)
				}
				cmd.Dir = ws
				out, err := cmd.CombinedOutput()
				if want := tc.want + "\n0\n"; err != nil || string(out) != want {
					t.Errorf("noNamespaces=%v: %v, output %q, want %q", noNS, err, out, want)
				}
			})
		}
	}
}

// TestSupervisorRunsWithOneP: the supervisor Command starts was started
// with GOMAXPROCS=1 (its /proc/PID/environ, the block it was started with).
func TestSupervisorRunsWithOneP(t *testing.T) {
	requireLandlock(t)
	t.Setenv("GOMAXPROCS", "2")
	ws := t.TempDir()
	cmd := startSleep(t, ws)
	// Start returns once the exec's descriptors closed, which the kernel
	// does before it lays out the new environment: until then environ
	// reads empty. Poll (generously) for it.
	var b []byte
	var err error
	for deadline := time.Now().Add(30 * time.Second); len(b) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err = os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ"); err != nil {
			t.Fatal(err)
		}
	}
	vars := strings.Split(string(b), "\x00")
	if !slices.Contains(vars, "GOMAXPROCS=1") || !slices.Contains(vars, supervisorProcsEnv+"=1:2") {
		t.Fatalf("the supervisor (pid %d) was not started with GOMAXPROCS=1 and the caller's 2 beside it: %q", cmd.Process.Pid, vars)
	}
}
