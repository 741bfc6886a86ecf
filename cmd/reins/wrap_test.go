package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/testutil"
)

// writePi writes an executable fake `pi` (a bash script) into a fresh
// directory and returns the directory.
func writePi(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pi"), []byte("#!/bin/bash\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeMeta writes a META.json whose artifacts are in dir.
func writeMeta(t *testing.T, dir string, edit func(m map[string]any)) string {
	t.Helper()
	m := map[string]any{
		"runId": "run-1", "mode": "single", "agent": "scout", "agentSource": "builtin", "task": "inspect auth",
		"cwd": dir, "requestedModel": "openai/gpt-5", "resolvedModel": "openai/gpt-5", "startedAt": "2026-04-09T00:00:00.000Z",
		"sessionPath": filepath.Join(dir, "child-session.jsonl"), "eventsPath": filepath.Join(dir, "events.jsonl"),
		"resultPath": filepath.Join(dir, "result.json"), "stdoutPath": filepath.Join(dir, "stdout.log"),
		"stderrPath": filepath.Join(dir, "stderr.log"), "transcriptPath": filepath.Join(dir, "transcript.log"),
		"systemPromptPath": filepath.Join(dir, "system-prompt.md"),
	}
	if edit != nil {
		edit(m)
	}
	data, _ := json.Marshal(m)
	p := filepath.Join(dir, "meta.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func wrapCmd(t *testing.T, binDir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"wrap"}, args...)...)
	cmd.Env = []string{"REINS_AS_MAIN=1", "PATH=" + binDir + ":/usr/bin:/bin", "HOME=" + t.TempDir(), cli.ExtraEnv + "=" + os.Getenv(cli.ExtraEnv)}
	return cmd
}

func loadJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// The seed's regression, through the command: a toolUse message, a tool
// call 400 ms later, the final stop, exit. The grace (100 ms) is shorter
// than the gap, so cleanup started by the toolUse message would cut it.
func TestWrapToolUseThenStop(t *testing.T) {
	bin := writePi(t, `
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"starting"}],"model":"openai/gpt-5","stopReason":"toolUse"}}'
sleep 0.4
echo '{"type":"tool_execution_start","toolName":"read","args":{"path":"src/auth.ts"}}'
sleep 0.3
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"final"}],"model":"openai/gpt-5","stopReason":"stop"}}'
sleep 0.5
exit 0`)
	dir := t.TempDir()
	meta := writeMeta(t, dir, nil)
	code, stderr := exitCode(t, wrapCmd(t, bin, "--grace", "100ms", meta))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	res := loadJSON(t, filepath.Join(dir, "result.json"))
	for k, v := range map[string]any{"exitCode": 0.0, "stopReason": "stop", "rawStopReason": "stop", "finalText": "final"} {
		if res[k] != v {
			t.Errorf("result.json %s = %v, want %v", k, res[k], v)
		}
	}
	events, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if !bytes.Contains(events, []byte(`"type":"tool_call"`)) {
		t.Errorf("events.jsonl lacks the tool_call:\n%s", events)
	}
}

func TestWrapMissingPi(t *testing.T) {
	dir := t.TempDir()
	meta := writeMeta(t, dir, nil)
	code, stderr := exitCode(t, wrapCmd(t, t.TempDir(), meta))
	if code != 0 {
		t.Fatalf("exit %d, want 0 (result.json written): %s", code, stderr)
	}
	res := loadJSON(t, filepath.Join(dir, "result.json"))
	if res["stopReason"] != "error" || res["exitCode"] == 0.0 {
		t.Errorf("result.json = %v", res)
	}
}

func TestWrapUnwritableResult(t *testing.T) {
	started := filepath.Join(t.TempDir(), "started")
	bin := writePi(t, "touch "+started)
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	os.WriteFile(blocker, nil, 0o644)
	meta := writeMeta(t, dir, func(m map[string]any) { m["resultPath"] = filepath.Join(blocker, "result.json") })
	code, stderr := exitCode(t, wrapCmd(t, bin, meta))
	if code == 0 || !strings.Contains(stderr, "cannot write result artifact") {
		t.Errorf("exit %d, stderr %q; want a non-zero exit and a clear error", code, stderr)
	}
	if _, err := os.Stat(started); err == nil {
		t.Error("the child ran")
	}
}

func TestWrapBadMeta(t *testing.T) {
	dir := t.TempDir()
	code, stderr := exitCode(t, wrapCmd(t, dir, filepath.Join(dir, "absent.json")))
	if code != exitUsage || !strings.Contains(stderr, "absent.json") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	p := filepath.Join(dir, "partial.json")
	os.WriteFile(p, []byte(`{"runId":"r"}`), 0o644)
	code, stderr = exitCode(t, wrapCmd(t, dir, p))
	if code != exitUsage || !strings.Contains(stderr, "resultPath") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// SIGTERM to `reins wrap` tears the child down and still writes
// result.json: aborted, exit 0.
func TestWrapSignalled(t *testing.T) {
	bin := writePi(t, `
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"working"}],"stopReason":"toolUse"}}'
exec sleep 1000`)
	dir := t.TempDir()
	meta := writeMeta(t, dir, nil)
	cmd := wrapCmd(t, bin, meta)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if data, _ := os.ReadFile(filepath.Join(dir, "events.jsonl")); bytes.Contains(data, []byte("assistant_text")) {
			break
		}
		if i > 3000 {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("the child never spoke")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("wrap: %v: %s", err, stderr.String())
	}
	res := loadJSON(t, filepath.Join(dir, "result.json"))
	if res["stopReason"] != "aborted" || res["finalText"] != "working" {
		t.Errorf("result.json = %v", res)
	}
}

// Acceptance: canary secrets a pi child writes to stderr (and into its
// error messages) never reach a tool result, a diagnostic, a session event
// or `reins run --json` output; they stay in the child's artifacts.
func TestPiChildCanaryStaysInArtifacts(t *testing.T) {
	const canary = "CANARY-SECRET-7f3a9"
	children := map[string]string{
		"error answer": `
echo 'token=` + canary + `' >&2
echo '{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"401 bad key ` + canary + `"}}'
exit 1`,
		"no terminal": `
echo 'panic: ` + canary + `' >&2
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"looking"}],"stopReason":"toolUse"}}'
exit 2`,
		"success": `
echo 'debug ` + canary + `' >&2
echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"all fine"}],"stopReason":"stop"}}'`,
	}
	sc, err := mock.Parse([]byte(`
replies:
  - match: delegate-leaky
    toolCalls:
      - name: subagent
        arguments: {description: leak check, prompt: CHILD go, agent: leaky}
fallback:
  text: "parent saw: "
  echo: true
`))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range children {
		t.Run(name, func(t *testing.T) {
			url, _, stop := mock.StartTest(sc)
			defer stop()
			bin := writePi(t, body)
			home, cwd := t.TempDir(), t.TempDir()
			agent := "---\nname: leaky\nprovider: pi\ncommand: " + filepath.Join(bin, "pi") + "\n---\nYou leak.\n"
			os.MkdirAll(filepath.Join(cwd, ".reins", "agents"), 0o755)
			os.WriteFile(filepath.Join(cwd, ".reins", "agents", "leaky.md"), []byte(agent), 0o644)
			testutil.Trust(t, home, cwd)
			cmd := exec.Command(os.Args[0], "run", "--json", "--base-url", url, "-m", "openai/m", "delegate-leaky")
			cmd.Dir = cwd
			cmd.Env = append(os.Environ(), "REINS_AS_MAIN=1", "REINS_HOME="+home, "OPENAI_API_KEY=")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("reins run: %v\n%s", err, stderr.String())
			}
			var out struct {
				StopReason string `json:"stopReason"`
				Output     string `json:"output"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Fatalf("--json output %q: %v", stdout.String(), err)
			}
			if !strings.Contains(out.Output, "parent saw: ") {
				t.Fatalf("the child's result never reached the parent: %q", out.Output)
			}
			if name == "success" {
				if !strings.Contains(out.Output, "all fine") {
					t.Errorf("output %q lacks the child's answer", out.Output)
				}
			} else if !strings.Contains(out.Output, "Diagnostic: Subagent failure (provider: pi;") {
				t.Errorf("output %q lacks the pi diagnostic", out.Output)
			}
			for _, where := range []struct{ what, text string }{{"--json output", stdout.String()}, {"stderr", stderr.String()}} {
				if strings.Contains(where.text, canary) {
					t.Errorf("canary in %s: %s", where.what, where.text)
				}
			}
			logs, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "session.jsonl"))
			if len(logs) == 0 {
				t.Fatal("no session log")
			}
			for _, l := range logs {
				data, _ := os.ReadFile(l)
				if bytes.Contains(data, []byte(canary)) {
					t.Errorf("canary in session log %s", l)
				}
			}
			// The canary was really emitted: it is in the child's artifacts.
			arts, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "children", "*", "stderr.log"))
			if len(arts) != 1 {
				t.Fatalf("child artifacts: %v", arts)
			}
			if data, _ := os.ReadFile(arts[0]); !bytes.Contains(data, []byte(canary)) {
				t.Errorf("stderr.log lacks the canary: %q", data)
			}
		})
	}
}
