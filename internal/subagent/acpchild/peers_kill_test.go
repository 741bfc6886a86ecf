package acpchild

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/testutil"
	"github.com/reinsdev/reins/internal/tool"
)

// The SIGKILL-of-reins case of TestPeerAgents: a "reins" — this test
// binary run again as peerKillHelper, holding the acp provider with a real
// agent mid-turn — is killed with SIGKILL, so no teardown of reins's own
// runs, and every process the agent started must be gone soon after: the
// sandbox supervisor notices its parent's death and ends its container.
// The processes are found by the test's mark in their environment (a
// /proc scan), which a detached daemon in a session of its own, like
// cline's hub daemon, carries as well.

// The helper's inputs, in its environment.
const (
	peerHelperEnv = "ACPCHILD_PEER_HELPER" // the peerAgent's name
	peerURLEnv    = "ACPCHILD_PEER_URL"
	peerHomeEnv   = "ACPCHILD_PEER_HOME"
	peerCwdEnv    = "ACPCHILD_PEER_CWD"
	// peerSessionsEnv is the helper's sessions folder, made by the parent
	// under its own t.TempDir: the helper is killed with SIGKILL, so a
	// t.TempDir of its own would never be removed (each CI run left seven
	// in /tmp).
	peerSessionsEnv = "ACPCHILD_PEER_SESSIONS"
)

// TestPeerKillHelper is not a test: run by peerKill as the reins that
// gets killed, it starts the agent and waits, forever as far as the
// parent is concerned (it is bounded all the same).
func TestPeerKillHelper(t *testing.T) {
	name := os.Getenv(peerHelperEnv)
	if name == "" {
		t.Skip("the SIGKILL case's helper process; run by TestPeerAgents")
	}
	var pa *peerAgent
	for i := range peerAgents {
		if peerAgents[i].name == name {
			pa = &peerAgents[i]
		}
	}
	if pa == nil {
		t.Fatalf("no peer agent %q", name)
	}
	home := os.Getenv(peerHomeEnv)
	ag := pa.agent(testutil.Peers(t), os.Getenv(peerURLEnv), home)
	ag.Env[testutil.MarkEnv] = os.Getenv(testutil.MarkEnv)
	prov := New(Options{Ladder: testLadder, ExitWait: testExitWait, StartTimeout: 2 * time.Minute, SessionsDir: os.Getenv(peerSessionsEnv)})
	req := subagent.Request{RunID: "run-1", Agent: ag, Prompt: "think hard", Depth: 1, Cwd: os.Getenv(peerCwdEnv),
		Permission: tool.WorkspaceWrite, ParentSession: "parent-1", ChildID: "child-1"}
	req.Sandbox.Writable = []string{home}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r, err := prov.Start(ctx, req)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	r.Wait(ctx)
	r.Dispose()
}

// peerKill runs p's agent under a helper reins, waits until the agent is
// mid-turn (its model request is in flight at the stalling mock) and its
// daemon, if it has one, is up, kills the helper with SIGKILL and requires
// that none of the test's processes is left.
func peerKill(t *testing.T, p *peerRun) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPeerKillHelper$", "-test.v")
	cmd.Env = append(os.Environ(), p.f.mark, peerHelperEnv+"="+p.pa.name, peerURLEnv+"="+p.url,
		peerHomeEnv+"="+p.home, peerCwdEnv+"="+p.f.cwd, peerSessionsEnv+"="+t.TempDir())
	out, err := os.Create(filepath.Join(t.TempDir(), "helper.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	helperTemp := filepath.Join(os.TempDir(), "TestPeerKillHelper*")
	tempBefore, _ := filepath.Glob(helperTemp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	defer func() { cmd.Process.Kill(); <-done }()
	_, mark, _ := strings.Cut(p.f.mark, "=")
	for deadline := time.Now().Add(4 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if p.srv.InFlight() > 0 {
			break
		}
		select {
		case <-done:
			log, _ := os.ReadFile(out.Name())
			t.Fatalf("the helper ended before its agent was mid-turn: %v\n%s", cmd.ProcessState, log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent never reached the model (in flight %d); running: %v", p.srv.InFlight(), testutil.Marked(mark))
		}
	}
	before := testutil.Marked(mark)
	if p.pa.daemon != "" {
		t.Logf("%s: its daemon (%s) up at the kill: %v", p.pa.name, p.pa.daemon, hasCmdline(before, p.pa.daemon))
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	// A bound, not a measure: the supervisor's teardown takes milliseconds
	// when the machine is idle.
	if left := testutil.LeftBehind(mark, 30*time.Second); len(left) > 0 {
		for _, pr := range left {
			syscall.Kill(pr.PID, syscall.SIGKILL)
		}
		t.Fatalf("alive after reins was killed with SIGKILL: %v", left)
	}
	// A process that dropped the mark from its environment (a daemon
	// started with an environment of its own) would escape the scan
	// above; one naming the test's workspace or HOME (cline's hub daemon
	// has --cwd WORKSPACE) is caught here.
	if left := naming(p.f.cwd, p.home); len(left) > 0 {
		t.Fatalf("alive after reins was killed with SIGKILL, naming the test's folders: %v", left)
	}
	// Files too: nothing the killed helper made may stay in the temp folder.
	tempAfter, _ := filepath.Glob(helperTemp)
	for _, d := range tempAfter {
		if !slices.Contains(tempBefore, d) {
			os.RemoveAll(d)
			t.Errorf("the killed helper left %s behind", d)
		}
	}
	t.Logf("%s: %d processes before the kill, none after: %v", p.pa.name, len(before), before)
}

// naming lists the live processes whose command line holds one of dirs.
func naming(dirs ...string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue // gone, or a zombie
		}
		cl := strings.ReplaceAll(string(b), "\x00", " ")
		for _, d := range dirs {
			if strings.Contains(cl, d) {
				out = append(out, e.Name()+" "+cl)
				break
			}
		}
	}
	return out
}

// hasCmdline reports whether a process's command line holds want.
func hasCmdline(procs []testutil.Proc, want string) bool {
	for _, pr := range procs {
		if strings.Contains(pr.Cmdline, want) {
			return true
		}
	}
	return false
}
