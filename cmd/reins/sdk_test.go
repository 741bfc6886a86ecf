package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/sdkserver/sdkfake"
	"github.com/reinsdev/reins/internal/testutil"
	"go.uber.org/goleak"
)

// init runs before TestMain: a test binary started as a scripted fake SDK
// runtime plays it instead of running tests.
func init() {
	if sdkfake.Active() {
		sdkfake.Main()
	}
}

const sdkCanary = "CANARY-c0ffee-cmd"

// sdkWorkspace is a cwd with a file, a config and agent definitions, and a
// REINS_HOME; $MARK, $CANARY in agent bodies are replaced.
func sdkWorkspace(t *testing.T, mark string, agents map[string]string) (cwd, home string) {
	t.Helper()
	cwd, home = t.TempDir(), t.TempDir()
	files := map[string]string{
		"hello.txt":          "hi\n",
		".reins/config.yaml": "providers:\n  openai:\n    retry: {maxRetries: 0, initialDelay: 1ms, maxDelay: 1ms, jitter: 0}\n",
	}
	for name, body := range agents {
		files[".reins/agents/"+name+".md"] = strings.NewReplacer("$MARK", mark, "$CANARY", sdkCanary).Replace(body)
	}
	for name, body := range files {
		p := filepath.Join(cwd, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Trust(t, home, cwd)
	return cwd, home
}

// reinsIn runs the test binary as reins in cwd; every process it starts
// inherits the mark.
func reinsIn(t *testing.T, cwd, home, mark string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "REINS_AS_MAIN=1", "REINS_HOME="+home, "DEEPSEEK_API_KEY=", "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=",
		"GORACE=atexit_sleep_ms=0", sdkfake.EnvMark+"="+mark)
	cmd.Dir = cwd
	return cmd
}

func checkNoLeftovers(t *testing.T, mark string) {
	t.Helper()
	if pids := sdkfake.Leftovers(mark); len(pids) > 0 {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Errorf("processes left behind: %v", pids)
	}
}

func startMock(t *testing.T, script string) (string, *mock.Server) {
	t.Helper()
	sc, err := mock.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	url, srv, stop := mock.StartTest(sc)
	t.Cleanup(stop)
	return url, srv
}

// TestSDKCommandPythonClient drives the real `reins sdk` command with the
// Python client of internal/sdkserver/testdata.
func TestSDKCommandPythonClient(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	python := testutil.Python(t)
	url, _ := startMock(t, `
replies:
  - match: list the files
    toolCalls:
      - {id: call_1, name: ls, arguments: {}}
  - match: hello.txt
    text: I found hello.txt
`)
	mark := sdkfake.NewMark(t.Name())
	cwd, home := sdkWorkspace(t, mark, nil)
	script, err := filepath.Abs("../../internal/sdkserver/testdata/client.py")
	if err != nil {
		t.Fatal(err)
	}
	cmd := reinsIn(t, cwd, home, mark)
	cmd.Args = []string{python, script, os.Args[0], "sdk", "-m", "openai/test", "--base-url", url}
	cmd.Path = python
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client.py: %v\n%s", err, stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("summary %q: %v", out, err)
	}
	if got["output"] != "I found hello.txt" || got["stopReason"] != "completed" || got["exitCode"] != 0.0 || got["parseError"] != -32700.0 || got["unknownMethod"] != -32601.0 {
		t.Errorf("summary %s", out)
	}
	checkNoLeftovers(t, mark)
}

// TestRunDelegatesToReinsChild: `reins run --json` whose agent is a reins
// child; the agent names no command, so the child is the running reins
// executable as `reins sdk`.
func TestRunDelegatesToReinsChild(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	url, srv := startMock(t, `
replies:
  - match: delegate-now
    toolCalls:
      - {id: p1, name: subagent, arguments: {description: ask the child, agent: helper, prompt: "CHILD-TASK list the files"}}
  - match: CHILD-TASK
    toolCalls:
      - {id: c1, name: ls, arguments: {}}
  - match: hello.txt
    text: the child saw hello.txt
  - match: the child saw
    text: parent done
`)
	mark := sdkfake.NewMark(t.Name())
	cwd, home := sdkWorkspace(t, mark, map[string]string{"helper": "---\nname: helper\ndescription: a reins child\nprovider: reins\n---\nYou help.\n"})
	cmd := reinsIn(t, cwd, home, mark, "run", "--json", "-m", "openai/test", "--base-url", url, "delegate-now")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reins run: %v\n%s", err, stderr.String())
	}
	var res runResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("stdout %q: %v", out, err)
	}
	if res.StopReason != "completed" || res.Output != "parent done" {
		t.Errorf("result %+v", res)
	}
	if srv.Count() != 4 {
		t.Errorf("model requests %d, want 4", srv.Count())
	}
	// The child's answer is the parent's tool result.
	b, _ := os.ReadFile(filepath.Join(home, "sessions", res.SessionID, "session.jsonl"))
	if !regexp.MustCompile(`"content":"the child saw hello.txt\\nchild: child-[0-9a-f]{8}","isError":false`).Match(b) {
		t.Errorf("parent log lacks the child's answer as its tool result:\n%s", b)
	}
	// Usage sums the parent and the child.
	if res.Usage.InputTokens == 0 {
		t.Errorf("usage %+v", res.Usage)
	}
	checkNoLeftovers(t, mark)
}

// TestRunJSONNeverCarriesChildText is the leak test at the CLI: reins
// children that put a canary in stderr, error messages and protocol
// payloads. The canary is in no tool result, diagnostic, session event or
// --json output; only in the host log.
func TestRunJSONNeverCarriesChildText(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	agent := func(name, scenario string) string {
		return "---\nname: " + name + "\ndescription: a failing reins child\nprovider: reins\ncommand: " + exe +
			"\nenv:\n  REINS_FAKE_SDK: \"" + scenario + "\"\n  REINS_FAKE_CANARY: $CANARY\n  REINS_FAKE_GRANDCHILD: \"1\"\n---\n"
	}
	url, _ := startMock(t, `
replies:
  - match: fan-out
    toolCalls:
      - {id: a, name: subagent, arguments: {description: crash, agent: crasher, prompt: task one}}
      - {id: b, name: subagent, arguments: {description: error turn, agent: erring, prompt: task two}}
      - {id: c, name: subagent, arguments: {description: bad init, agent: refuser, prompt: task three}}
      - {id: d, name: subagent, arguments: {description: killed, agent: killed, prompt: task four}}
  - match: Error
    text: parent done
`)
	mark := sdkfake.NewMark(t.Name())
	cwd, home := sdkWorkspace(t, mark, map[string]string{
		"crasher": agent("crasher", sdkfake.ScenarioCrashExit),
		"erring":  agent("erring", "turn:error"),
		"refuser": agent("refuser", sdkfake.ScenarioErrorInit),
		"killed":  agent("killed", sdkfake.ScenarioCrashSignal),
	})
	cmd := reinsIn(t, cwd, home, mark, "run", "--json", "-m", "openai/test", "--base-url", url, "fan-out")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reins run: %v\n%s", err, stderr.String())
	}
	if bytes.Contains(out, []byte(sdkCanary)) {
		t.Errorf("--json output carries child text: %s", out)
	}
	var res runResult
	if err := json.Unmarshal(out, &res); err != nil || res.Output != "parent done" {
		t.Fatalf("stdout %q: %v", out, err)
	}
	b, _ := os.ReadFile(filepath.Join(home, "sessions", res.SessionID, "session.jsonl"))
	for _, want := range []string{
		"Subagent failure (provider: reins; stage: session-run; category: transport; stop reason: error; exit code: 3)",
		"Subagent failure (provider: reins; stage: session-run; category: child-error; stop reason: error)",
		"Subagent failure (provider: reins; stage: initialize; category: protocol; stop reason: error)",
		"Subagent failure (provider: reins; stage: session-run; category: transport; stop reason: error; signal: SIGKILL)",
	} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("parent log lacks %q", want)
		}
	}
	testutil.CanaryOnlyInHostLog(t, home, sdkCanary)
	checkNoLeftovers(t, mark)
}
