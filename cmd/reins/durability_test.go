package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdkacp "github.com/coder/acp-go-sdk"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
	reinssdk "github.com/reinsdev/reins/sdk"
)

// gated serves a mock script but holds every request until the test
// opens the gate, so a test can act while a run is inside a model request
// without guessing at timing.
type gated struct {
	srv     *mock.Server
	url     string
	arrived chan struct{} // one send per request that reached the gate
	mu      sync.Mutex
	gate    chan struct{}
}

func startGated(t *testing.T, script string) *gated {
	t.Helper()
	sc, err := mock.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	g := &gated{srv: mock.NewServer(sc), arrived: make(chan struct{}, 64), gate: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		gate := g.gate
		g.mu.Unlock()
		g.arrived <- struct{}{}
		select {
		case <-gate:
		case <-ctx.Done():
			return
		case <-r.Context().Done():
			return
		}
		g.srv.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { cancel(); ts.CloseClientConnections(); ts.Close() })
	g.url = ts.URL
	return g
}

// open lets every held and later request through, until close.
func (g *gated) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.gate:
	default:
		close(g.gate)
	}
}

// shut holds the requests that come after it.
func (g *gated) shut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gate = make(chan struct{})
}

// wait blocks until a request reached the gate.
func (g *gated) wait(t *testing.T) {
	t.Helper()
	select {
	case <-g.arrived:
	case <-time.After(60 * time.Second):
		t.Fatal("no model request arrived")
	}
}

// TestRunReportsJSONWriteError (issue 13, finding 3): the --json object
// that cannot be written is a failed run, not exit 0.
func TestRunReportsJSONWriteError(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("this test needs /dev/full (Linux): %v", err)
	}
	defer full.Close()
	for _, mode := range []string{"--json", "--permission=workspace-write"} {
		t.Run(mode, func(t *testing.T) {
			cmd := reinsCmd(t, t.TempDir(), "run", mode, "-m", "mock/echo", "hello")
			cmd.Stdout = full
			code, stderr := exitCode(t, cmd)
			if code != 1 || !strings.Contains(stderr, "writing the result") {
				t.Errorf("exit %d, stderr %q; want 1 and a message about writing the result", code, stderr)
			}
		})
	}
}

// TestRunReportsVanishedLog (issue 13, finding 4): the sessions directory
// removed while the model answers is noticed at the next flush: the turn
// ends error LOG_WRITE, reins says so and exits 1 instead of printing an
// id that no longer exists with exit 0.
func TestRunReportsVanishedLog(t *testing.T) {
	g := startGated(t, "replies:\n  - {text: all done, repeat: true}\n")
	home := t.TempDir()
	cmd := reinsCmd(t, home, "run", "--json", "--base-url", g.url, "-m", "openai/m", "hello")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g.wait(t)
	if err := os.RemoveAll(filepath.Join(home, "sessions")); err != nil {
		t.Fatal(err)
	}
	g.open()
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var out runResult
	if jerr := json.Unmarshal(stdout.Bytes(), &out); jerr != nil {
		t.Fatalf("stdout %q: %v", stdout.Bytes(), jerr)
	}
	if code != 1 || out.StopReason != "error" || out.Error == nil || out.Error.Code != "LOG_WRITE" {
		t.Errorf("exit %d, result %s; want exit 1, stopReason error, LOG_WRITE", code, stdout.Bytes())
	}
	if !strings.Contains(stderr.String(), "session log") {
		t.Errorf("stderr does not say what failed: %q", stderr.String())
	}
}

// TestResumeRace (issue 13, finding 2 and acceptance 3): eight processes
// race to resume one session, round after round. Exactly one wins each
// round — it is held inside its model request until the others are done —
// the seven others exit 2 naming the winner's pid, and the log stays
// valid, one turn per round.
func TestResumeRace(t *testing.T) {
	g := startGated(t, "replies:\n  - {text: fine, repeat: true}\n")
	home := t.TempDir()
	g.open()
	first := reinsCmd(t, home, "run", "--json", "--base-url", g.url, "-m", "openai/m", "start")
	out, err := first.Output()
	if err != nil {
		t.Fatalf("first run: %v", err)
	}
	g.wait(t)
	var res runResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	id := res.SessionID

	const procs, rounds = 8, 3
	for round := range rounds {
		g.shut()
		type exit struct {
			i      int
			code   int
			stderr string
		}
		exits := make(chan exit, procs)
		cmds := make([]*exec.Cmd, procs)
		for i := range cmds {
			cmd := reinsCmd(t, home, "run", "--resume", id, "--base-url", g.url, "-m", "openai/m", fmt.Sprintf("round %d from %d", round, i))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds[i] = cmd
			go func() {
				err := cmd.Wait()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
				exits <- exit{i, code, stderr.String()}
			}()
		}
		// The winner holds the session inside its model request; every
		// other process must give up on its own meanwhile.
		g.wait(t)
		var lost []exit
		deadline := time.After(60 * time.Second)
		for len(lost) < procs-1 {
			select {
			case e := <-exits:
				lost = append(lost, e)
			case <-deadline:
				g.open()
				t.Fatalf("round %d: %d of %d losers exited while the winner ran", round, len(lost), procs-1)
			}
		}
		if round == 0 {
			// reins log reads the live session, unlocked and without error.
			lg := reinsCmd(t, home, "log", id)
			var out bytes.Buffer
			lg.Stdout = &out
			if code, stderr := exitCode(t, lg); code != 0 || !strings.Contains(out.String(), "running in pid") {
				t.Errorf("reins log of the live session: exit %d, %q, stdout:\n%s", code, stderr, out.String())
			}
		}
		g.open()
		win := <-exits
		if win.code != 0 {
			t.Errorf("round %d: the winner exited %d: %s", round, win.code, win.stderr)
		}
		pid := cmds[win.i].Process.Pid
		want := fmt.Sprintf("reins: session %s is in use by another reins process (pid %d)\n", id, pid)
		for _, e := range lost {
			if e.code != 2 || e.stderr != want {
				t.Errorf("round %d: process %d exited %d with %q; want 2 and %q", round, e.i, e.code, e.stderr, want)
			}
		}
		ld, err := session.Load(filepath.Join(home, "sessions", id, session.FileName))
		if err != nil {
			t.Fatalf("round %d: the log does not load: %v", round, err)
		}
		if ld.Repair.Repaired() {
			t.Errorf("round %d: the log needed repair: %+v", round, ld.Repair)
		}
		turns := 0
		for _, e := range ld.Events {
			if e.Type == session.TypeTurnStart {
				turns++
			}
		}
		if turns != round+2 {
			t.Errorf("round %d: %d turns in the log, want %d", round, turns, round+2)
		}
	}
}

// TestSessionInUseAcrossCommands (issue 13, finding 2): a session `reins
// acp` or `reins sdk` is serving cannot be loaded by another ACP agent or
// resumed by `reins run`; each refusal names the holder's pid.
func TestSessionInUseAcrossCommands(t *testing.T) {
	url, _ := startMock(t, "replies:\n  - {text: fine, repeat: true}\n")
	home := t.TempDir()
	ctx := t.Context()
	inUse := func(id string) string { return "session " + id + " is in use by another reins process (pid " }

	// An ACP agent holds a session; a second one may not load it.
	var stops []func()
	defer func() { // before the orphan checks of the cleanups
		for _, stop := range stops {
			stop()
		}
	}()
	startACP := func() (*exec.Cmd, *sdkacp.ClientSideConnection, string) {
		cwd := t.TempDir()
		cmd := acpCmd(t, cwd, home, "acp", "-m", "openai/test", "--base-url", url)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stops = append(stops, func() { stdin.Close(); cmd.Wait() })
		conn := sdkacp.NewClientSideConnection(&editor{}, stdin, stdout)
		if _, err := conn.Initialize(ctx, sdkacp.InitializeRequest{ProtocolVersion: sdkacp.ProtocolVersionNumber}); err != nil {
			t.Fatal(err)
		}
		return cmd, conn, cwd
	}
	holder, a, cwd := startACP()
	ns, err := a.NewSession(ctx, sdkacp.NewSessionRequest{Cwd: cwd, McpServers: []sdkacp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	id := string(ns.SessionId)
	_, b, cwd2 := startACP()
	_, err = b.LoadSession(ctx, sdkacp.LoadSessionRequest{SessionId: ns.SessionId, Cwd: cwd2, McpServers: []sdkacp.McpServer{}})
	want := fmt.Sprintf("%s%d)", inUse(id), holder.Process.Pid)
	if err == nil || !strings.Contains(fmt.Sprint(err), want) {
		t.Errorf("session/load of a session in use: %v; want an error saying %q", err, want)
	}
	code, stderr := exitCode(t, reinsCmd(t, home, "run", "--resume", id, "--base-url", url, "-m", "openai/m", "more"))
	if code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("reins run --resume of an ACP session: exit %d, %q; want 2 and %q", code, stderr, want)
	}

	// A reins sdk runtime holds the sessions it runs.
	c, err := reinssdk.Start(ctx, reinssdk.Options{
		Command: os.Args[0], Args: []string{"sdk", "-m", "openai/test", "--base-url", url},
		Env: append(os.Environ(), "REINS_AS_MAIN=1", "REINS_HOME="+home, testutil.MarkChildren(t)), Dir: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Run(ctx, "hello")
	if err != nil {
		t.Fatal(err)
	}
	code, stderr = exitCode(t, reinsCmd(t, home, "run", "--resume", res.SessionID, "--base-url", url, "-m", "openai/m", "more"))
	if code != 2 || !strings.Contains(stderr, inUse(res.SessionID)) {
		t.Errorf("reins run --resume of an SDK session: exit %d, %q; want 2 and %q", code, stderr, inUse(res.SessionID))
	}
}
