package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/mcpspec"
	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/testutil"
	"github.com/reinsdev/reins/internal/tool"
)

const canary = "SERVER-WROTE-THIS-7f3a"

// hostile is testdata/hostile.js in mode as a server named name.
func hostile(t *testing.T, name, mode string) mcpspec.Server {
	if _, err := exec.LookPath("node"); err != nil {
		testutil.MissingPeer(t, "node not found")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "hostile.js"))
	if err != nil {
		t.Fatal(err)
	}
	return mcpspec.Server{Name: name, Command: "node", Args: []string{script, mode}, Env: map[string]string{"REINS_CANARY": canary}}
}

// noCanary fails when a text the model would read holds server-written
// bytes.
func noCanary(t *testing.T, what, text string) {
	t.Helper()
	if strings.Contains(text, canary) || strings.Contains(text, "hostile") {
		t.Errorf("%s holds server-written text: %q", what, text)
	}
}

// A server that crashes on a call: the call is the fixed "stopped" text,
// the next call too, the server is reaped, and its last words are in the
// host log only.
func TestHostileCrash(t *testing.T) {
	m, _, log := stdioManager(t, Options{}, hostile(t, "crashy", "crash"))
	ts, err := m.Tools("crashy")
	if err != nil {
		t.Fatal(err)
	}
	poke := byName(ts)["mcp__crashy__poke"]
	want := (&Error{Server: "crashy", Failure: FailStopped}).Error()
	for i := range 2 {
		res := poke.Run(context.Background(), &tool.Env{}, json.RawMessage(`{}`))
		if !res.IsError || res.Content != want {
			t.Errorf("call %d: %+v, want %q", i, res, want)
		}
		noCanary(t, "the call result", res.Content)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if st, _ := m.Status("crashy"); st == StateStopped {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the crashed server is not marked stopped")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := m.Tools("crashy"); err == nil || err.Error() != want {
		t.Errorf("Tools after the crash: %v", err)
	}
	waitLog(t, log, "crashing "+canary)
	waitLog(t, log, "exited (code 3)")
}

// A server that never answers initialize: the start ends at the start
// timeout with its fixed text, the process is torn down, and a second
// request for its tools does not wait again.
func TestHostileSilent(t *testing.T) {
	// The start timeout must outlast a confined node's start-up, or the
	// server is killed before it writes the line the host log is checked
	// for: 2 s did not at load 37 (CI, 2026-12-02). The wait is the test's
	// cost only when it passes; nothing here asserts a duration.
	const startTimeout = 15 * time.Second
	m, _, log := stdioManager(t, Options{StartTimeout: startTimeout}, hostile(t, "mute", "silent"))
	done := make(chan error, 1)
	go func() {
		_, err := m.Tools("mute")
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(startTimeout + 60*time.Second):
		t.Fatal("the start of a silent server hangs")
	}
	want := (&Error{Server: "mute", Failure: FailStartTimeout, Timeout: startTimeout}).Error()
	if err == nil || err.Error() != want {
		t.Fatalf("start: %v, want %q", err, want)
	}
	noCanary(t, "the start error", err.Error())
	if st, _ := m.Status("mute"); st != StateFailed {
		t.Errorf("state %s, want %s", st, StateFailed)
	}
	if _, err := m.Tools("mute"); err == nil || err.Error() != want {
		t.Errorf("second Tools: %v", err)
	}
	waitLog(t, log, "hostile silent starting "+canary)
	// Started once: a second start would write its line again.
	if n := strings.Count(log.String(), "hostile silent starting"); n != 1 {
		t.Errorf("the server started %d times, want 1", n)
	}
}

// A server that writes MiB of stderr around every answer still answers
// (its stderr is drained, never left to fill the pipe), and the host log
// takes a bounded part of it.
func TestHostileFlood(t *testing.T) {
	m, _, log := stdioManager(t, Options{MaxStderrLog: 16 << 10}, hostile(t, "loud", "flood"))
	ts, err := m.Tools("loud")
	if err != nil {
		t.Fatal(err)
	}
	poke := byName(ts)["mcp__loud__poke"]
	for i := range 3 {
		if res := poke.Run(context.Background(), &tool.Env{}, nil); res.IsError || res.Content != "poked" {
			t.Fatalf("call %d: %+v", i, res)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	text := log.String()
	if len(text) > 64<<10 {
		t.Errorf("the host log took %d bytes of a flood; the bound is about 16 KiB", len(text))
	}
	if !strings.Contains(text, "more bytes not logged") {
		t.Errorf("the dropped stderr is not counted:\n%.2000s", text)
	}
}

// A server answering a call with a JSON-RPC error: the model reads the
// code and a fixed word, never the server's message.
func TestHostileErrorMessage(t *testing.T) {
	m, _, log := stdioManager(t, Options{}, hostile(t, "liar", "liar"))
	ts, err := m.Tools("liar")
	if err != nil {
		t.Fatal(err)
	}
	res := byName(ts)["mcp__liar__poke"].Run(context.Background(), &tool.Env{}, nil)
	if !res.IsError || res.Content != "MCP server liar answered the call with JSON-RPC error -32603 (internal error)" {
		t.Errorf("call: %+v", res)
	}
	noCanary(t, "the call result", res.Content)
	waitLog(t, log, "server says "+canary)
}

// A command that does not exist fails the start with its fixed text.
func TestMissingCommand(t *testing.T) {
	m, _, _ := stdioManager(t, Options{}, mcpspec.Server{Name: "gone", Command: "reins-no-such-mcp-server"})
	_, err := m.Tools("gone")
	if err == nil || err.Error() != (&Error{Server: "gone", Failure: FailStart}).Error() {
		t.Errorf("start: %v", err)
	}
}

func waitLog(t *testing.T, log *logSink, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(log.String(), want) {
		if time.Now().After(deadline) {
			t.Errorf("host log lacks %q:\n%.3000s", want, log)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// HTTP servers that hang or fail: fixed texts within the start timeout
// (the server's error body is never in them), the cause in the host log.
func TestHostileHTTP(t *testing.T) {
	hang := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer hung.Close()
	defer close(hang)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "server says "+canary, http.StatusInternalServerError)
	}))
	defer failing.Close()
	log := &logSink{}
	m := NewManager([]mcpspec.Server{{Name: "hung", URL: hung.URL}, {Name: "failing", URL: failing.URL}}, Options{Logf: log.logf, StartTimeout: time.Second})
	defer m.Close()
	for name, want := range map[string]string{
		"hung":    (&Error{Server: "hung", Failure: FailStartTimeout, Timeout: time.Second}).Error(),
		"failing": (&Error{Server: "failing", Failure: FailStart}).Error(),
	} {
		done := make(chan error, 1)
		go func() {
			_, err := m.Tools(name)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || err.Error() != want {
				t.Errorf("%s: %v, want %q", name, err, want)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: the start hangs", name)
		}
	}
	waitLog(t, log, "mcp server failing: start failed")
}

// Close during the start of a server that never answers cuts the start
// short: no wait for the start timeout, and nothing left behind.
func TestCloseDuringStart(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "ready")
	srv := hostile(t, "mute", "silent")
	srv.Env["HOSTILE_READY"] = ready
	// The ready file is outside the workspace.
	m, _, _ := stdioManager(t, Options{StartTimeout: 10 * time.Minute, Policy: func() sandbox.Policy { return sandbox.Policy{Mode: sandbox.FullAccess} }}, srv)
	done := make(chan error, 1)
	go func() {
		_, err := m.Tools("mute")
		done <- err
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	closed := make(chan error, 1)
	go func() { closed <- m.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("close: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Close waits for the start timeout")
	}
	if err := <-done; err == nil {
		t.Error("a start cut short by Close succeeded")
	}
}
