package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/parentwatch"
	"github.com/reinsdev/reins/internal/testutil"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as reins: testscript runs it under the
// name "reins", and the exit-code tests run it with REINS_AS_MAIN=1.
func TestMain(m *testing.M) {
	if os.Getenv("REINS_AS_MAIN") == "1" {
		parentwatch.Start() // as main does
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	// Every process the tests start carries the mark; none may outlive them.
	testscript.Main(cleanM{m, testutil.Mark("cmd/reins")}, map[string]func(){
		"reins": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// cleanM runs the tests, then fails the binary if a process they started
// is still alive.
type cleanM struct {
	m    *testing.M
	mark string
}

func (c cleanM) Run() int {
	// reins-extra for every reins the tests start (the commands it holds
	// run through the real reins → exec → reins-extra path); built here,
	// in the test binary itself, not in the reins it runs as.
	if err := extraHelper.build(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := c.m.Run()
	for _, h := range testHelpers {
		if h.dir != "" {
			os.RemoveAll(h.dir)
		}
	}
	return testutil.Clean(c.mark, code)
}

// mockServers holds each script's wire-level fake endpoint.
var mockServers sync.Map // *testscript.TestScript -> *mock.Server

// cmdMockLLM starts the fake OpenAI/Anthropic server on loopback with the
// script in file args[0] and sets $MOCK_URL.
func cmdMockLLM(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: mockllm SCRIPT")
	}
	sc, err := mock.Parse([]byte(ts.ReadFile(args[0])))
	ts.Check(err)
	url, srv, stop := mock.StartTest(sc)
	ts.Defer(stop)
	mockServers.Store(ts, srv)
	ts.Setenv("MOCK_URL", url)
}

func server(ts *testscript.TestScript) *mock.Server {
	v, ok := mockServers.Load(ts)
	if !ok {
		ts.Fatalf("no mockllm started")
	}
	return v.(*mock.Server)
}

// cmdMockRequests asserts the number of requests the server received.
func cmdMockRequests(ts *testscript.TestScript, neg bool, args []string) {
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	if got := server(ts).Count(); (got == want) == neg {
		ts.Fatalf("mock server got %d requests, want %d", got, want)
	}
}

// cmdMockBody writes request N's body (0-based) to a file.
func cmdMockBody(ts *testscript.TestScript, neg bool, args []string) {
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	rec, ok := server(ts).Request(n)
	if !ok {
		ts.Fatalf("request %d of %d", n, server(ts).Count())
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), rec.Body, 0o644))
}

// cmdLastSession sets $SESSION to the newest root session in $REINS_HOME.
func cmdLastSession(ts *testscript.TestScript, neg bool, args []string) {
	root := filepath.Join(ts.Getenv("REINS_HOME"), "sessions")
	ents, err := os.ReadDir(root)
	ts.Check(err)
	last := ""
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(root, e.Name(), "session.jsonl"))
		ts.Check(err)
		if !bytes.Contains(bytes.SplitN(b, []byte("\n"), 2)[0], []byte(`"parentSession"`)) && e.Name() > last {
			last = e.Name()
		}
	}
	if last == "" {
		ts.Fatalf("no session in %s", root)
	}
	ts.Setenv("SESSION", last)
}

// cmdCatalogd serves file args[0] as catwalk's /v2/providers on loopback
// and points $REINS_CATALOG_URL at it (reins models --refresh).
func cmdCatalogd(ts *testscript.TestScript, neg bool, args []string) {
	body := ts.ReadFile(args[0])
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/providers" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}))
	ts.Defer(srv.Close)
	ts.Setenv("REINS_CATALOG_URL", srv.URL)
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("REINS_HOME", filepath.Join(e.WorkDir, ".reins-home"))
			e.Setenv("HOME", e.WorkDir)
			e.Setenv(testutil.MarkEnv, os.Getenv(testutil.MarkEnv)+"/TestScripts/"+filepath.Base(e.WorkDir))
			for _, k := range []string{"DEEPSEEK_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPSEEK_BASE_URL", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"} {
				e.Setenv(k, "")
			}
			return nil
		},
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"mockllm":      cmdMockLLM,
			"catalogd":     cmdCatalogd,
			"mockrequests": cmdMockRequests,
			"mockbody":     cmdMockBody,
			"lastsession":  cmdLastSession,
			"keyserver":    cmdKeyServer,
			"keyheaders":   cmdKeyHeaders,
			"envsubst":     cmdEnvsubst,
		},
	})
}

// reinsCmd runs the test binary as reins.
func reinsCmd(t *testing.T, home string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	// The same environment whoever runs the tests (testutil.Env: no
	// TERM=dumb, no key or base URL of the user's).
	cmd.Env = testutil.Env("REINS_AS_MAIN=1", "REINS_HOME="+home, testutil.MarkChildren(t))
	cmd.Dir = t.TempDir()
	return cmd
}

func exitCode(t *testing.T, cmd *exec.Cmd) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stderr.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
}

func TestExitCodes(t *testing.T) {
	sc, err := mock.Parse([]byte(`
replies:
  - match: say-ok
    text: fine
    repeat: true
  - match: say-auth
    status: 401
    repeat: true
  - match: say-length
    text: cut sho
    finish: length
    repeat: true
`))
	if err != nil {
		t.Fatal(err)
	}
	url, _, stop := mock.StartTest(sc)
	defer stop()
	home := t.TempDir()
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"completed", []string{"run", "--base-url", url, "-m", "openai/m", "say-ok"}, 0},
		{"provider error", []string{"run", "--base-url", url, "-m", "openai/m", "say-auth"}, 1},
		{"max tokens", []string{"run", "--base-url", url, "-m", "openai/m", "say-length"}, 1},
		{"unknown flag", []string{"run", "--no-such-flag", "x"}, 2},
		{"no prompt", []string{"run"}, 2},
		{"bad permission", []string{"run", "--permission", "root", "x"}, 2},
		{"missing key", []string{"run", "-m", "deepseek/deepseek-chat", "x"}, 2},
		{"bad model", []string{"run", "-m", "nonsense", "x"}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, stderr := exitCode(t, reinsCmd(t, home, tc.args...))
			if got != tc.want {
				t.Errorf("exit %d, want %d; stderr: %s", got, tc.want, stderr)
			}
		})
	}
}

// TestInterruptExits130 sends SIGINT while the model stream stalls: the
// turn ends aborted, the log is closed cleanly, and reins exits 130.
func TestInterruptExits130(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			sc, _ := mock.Parse([]byte("replies:\n  - fault: stall\n"))
			url, srv, stop := mock.StartTest(sc)
			defer stop()
			home := t.TempDir()
			cmd := reinsCmd(t, home, "run", "--json", "--base-url", url, "-m", "openai/m", "hang")
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Wait until the request is in flight (the handler is installed by then).
			for i := 0; srv.Count() == 0; i++ {
				if i > 3000 {
					cmd.Process.Kill()
					t.Fatal("request never arrived")
				}
				time.Sleep(10 * time.Millisecond)
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			want := 128 + int(sig)
			if code != want {
				t.Fatalf("exit %d, want %d (stdout %s)", code, want, stdout.String())
			}
			if !bytes.Contains(stdout.Bytes(), []byte(`"stopReason":"aborted"`)) {
				t.Errorf("stdout %s lacks the aborted stop reason", stdout.String())
			}
			// The log was closed with turn/end aborted by the user.
			dirs, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "session.jsonl"))
			if len(dirs) != 1 {
				t.Fatalf("sessions: %v", dirs)
			}
			b, _ := os.ReadFile(dirs[0])
			if !bytes.Contains(b, []byte(`"type":"turn/end"`)) || !bytes.Contains(b, []byte(`"reason":"aborted","by":"user"`)) {
				t.Errorf("log lacks turn/end aborted by user:\n%s", b)
			}
		})
	}
}

// TestDemo runs the README's keyless demo as a newcomer would and checks it
// shows what it promises: the retried empty completion, the delegation
// whose max-tokens child's partial answer reaches the parent, the
// background job, and where the log is.
func TestDemo(t *testing.T) {
	home := t.TempDir()
	cmd := reinsCmd(t, home, "demo")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if code, stderr := exitCode(t, cmd); code != 0 {
		t.Fatalf("demo exit %d: %s\n%s", code, stderr, stdout.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"EMPTY_RESPONSE): retry 1/5",
		"Error: subagent run hit its token limit before finishing",
		"Partial output before the run ended:",
		"Partial summary: output selection prefers the last non-empty message",
		"continuing child child-",
		"Summary: the last non-empty assistant message is the output",
		"background job job-1 (subagent: survey the workspace) finished [status: completed]",
		"answer (completed):",
		"session log: " + filepath.Join(home, "sessions"),
		"next:        set a provider's key", "reins doctor says which model",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}

// TestMockLLMCommand runs `reins mock-llm` as a process, drives a run
// against the address it prints, and stops it with SIGTERM.
func TestMockLLMCommand(t *testing.T) {
	home := t.TempDir()
	script := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(script, []byte("replies:\n  - text: served by mock-llm\n"), 0o644)
	srv := reinsCmd(t, home, "mock-llm", "--script", script)
	out, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSpace(line[strings.Index(line, "http://"):])
	if !strings.HasPrefix(line, "reins mock-llm listening on http://127.0.0.1:") {
		t.Errorf("banner %q: want loopback", line)
	}
	run := reinsCmd(t, home, "run", "--base-url", url, "-m", "openai/m", "hi")
	got, err := run.Output()
	if err != nil || strings.TrimSpace(string(got)) != "served by mock-llm" {
		t.Errorf("run output %q err %v", got, err)
	}
	srv.Process.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Errorf("mock-llm exit after SIGTERM: %v", err)
	}
}
