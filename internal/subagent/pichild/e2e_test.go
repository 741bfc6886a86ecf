package pichild_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// The script serves both sides over one real HTTP server: the reins
// parent (openai wire, through --base-url) and the real pi child (through
// a custom openai-completions provider in its models.json).
const e2eScript = `
replies:
  - match: delegate-tool
    toolCalls:
      - id: call_parent_1
        name: subagent
        arguments: {description: read the file, prompt: PI-CHILD use-tool, agent: piscout}
  - match: use-tool
    toolCalls:
      - id: call_pi_1
        name: read
        arguments: {path: hello.txt}
  - match: hello-contents
    text: the file says hi
  - match: the file says hi
    text: "parent got: "
    echo: true
  - match: delegate-empty
    toolCalls:
      - id: call_parent_2
        name: subagent
        arguments: {description: empty child, prompt: PI-CHILD empty-please, agent: piscout}
  - match: empty-please
    fault: empty
  - match: subagent run failed
    text: "parent saw: "
    echo: true
`

// TestRealPi runs the real pi from npm as a subagent of a reins session,
// both against reins's mock endpoint: a tool-using child whose answer
// reaches the parent, and an empty completion whose failure is reported
// rather than passed off as success.
func TestRealPi(t *testing.T) {
	h, m, srv, home := piFixture(t, e2eScript)

	run := func(t *testing.T, prompt string) (string, []session.Event) {
		t.Helper()
		s, err := h.NewSession(harness.SessionOptions{Model: m, System: "parent system prompt"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		res := s.Run(ctx, prompt)
		s.Log.Flush()
		ld, err := session.Load(s.Log.Path())
		if err != nil {
			t.Fatal(err)
		}
		if res.Reason != session.ReasonCompleted {
			t.Fatalf("parent ended %s", res.Reason)
		}
		return testutil.NoChildLine(llm.BlocksText(outcome.FinalOutput(ld.Events))), ld.Events
	}

	t.Run("tool-using child", func(t *testing.T) {
		out, events := run(t, "please delegate-tool")
		if out != "parent got: the file says hi" {
			t.Errorf("parent output %q", out)
		}
		end := subagentEnd(t, events)
		if end.StopReason != "completed" || end.Diagnostic != "" || end.LastAssistantMessage == nil ||
			end.LastAssistantMessage.Text() != "the file says hi" {
			t.Errorf("subagent/end %+v", end)
		}
		// The child really ran pi's read tool, with reins's system prompt and
		// only the allowed tools.
		var childReqs int
		for _, r := range srv.Requests() {
			body := string(r.Body)
			if !strings.Contains(body, `"model":"mock-model"`) || !strings.Contains(body, "PI-CHILD use-tool") {
				continue // the parent's, or the other child's
			}
			childReqs++
			if !strings.Contains(body, "PI-SYSTEM-MARK") {
				t.Error("the agent's system prompt did not reach pi's request")
			}
			if !strings.Contains(body, `"name":"read"`) || !strings.Contains(body, `"name":"find"`) || strings.Contains(body, `"name":"bash"`) {
				t.Errorf("pi's tools are not the agent's allowlist: %s", body)
			}
		}
		if childReqs != 2 {
			t.Errorf("pi made %d requests for its task, want 2 (tool call, answer)", childReqs)
		}
		arts, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "children", "run-1", "events.jsonl"))
		if len(arts) != 1 {
			t.Fatalf("artifacts: %v", arts)
		}
		ev, _ := os.ReadFile(arts[0])
		if !bytes.Contains(ev, []byte(`"type":"tool_call","toolName":"read"`)) {
			t.Errorf("events.jsonl lacks the read call:\n%s", ev)
		}
	})

	t.Run("empty completion", func(t *testing.T) {
		out, events := run(t, "please delegate-empty")
		want := "parent saw: Error: subagent run failed\n" +
			"Diagnostic: Subagent failure (provider: pi; stage: run; category: child-error; stop reason: error; exit code: 0)"
		if out != want {
			t.Errorf("parent output\n%q\nwant\n%q", out, want)
		}
		end := subagentEnd(t, events)
		if end.StopReason != "error" || end.LastAssistantMessage != nil {
			t.Errorf("subagent/end %+v", end)
		}
		res, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "children", "run-1", "result.json"))
		for _, p := range res {
			data, _ := os.ReadFile(p)
			if bytes.Contains(data, []byte(`"finalText": ""`)) {
				t.Logf("pi on an empty completion: %s", data)
			}
		}
	})
}

// piFixture is a harness whose agent piscout is the real pi, both against
// one scripted server; it checks at the end that no pi process is left.
func piFixture(t *testing.T, script string) (*harness.Harness, *harness.Model, *mock.Server, string) {
	t.Helper()
	nm := testutil.Peers(t)
	sc, err := mock.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	url, srv, stop := mock.StartTest(sc)
	t.Cleanup(stop)

	home, cwd, piDir := t.TempDir(), t.TempDir(), t.TempDir()
	models := map[string]any{"providers": map[string]any{"reins-mock": map[string]any{
		"baseUrl": url + "/v1", "api": "openai-completions", "apiKey": "mock-key",
		"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
		"models": []any{map[string]any{"id": "mock-model"}},
	}}}
	data, _ := json.Marshal(models)
	write(t, filepath.Join(piDir, "models.json"), string(data))
	write(t, filepath.Join(cwd, "hello.txt"), "hello-contents: hi\n")
	mark := fmt.Sprintf("REINS_REAL_PI_MARK=%d", os.Getpid())
	markKey, markVal, _ := strings.Cut(mark, "=")
	write(t, filepath.Join(cwd, ".reins", "agents", "piscout.md"), fmt.Sprintf(`---
name: piscout
description: a pi scout
provider: pi
model: reins-mock/mock-model
tools: read, grep, glob
env:
  PI_CODING_AGENT_DIR: %q
  PI_OFFLINE: "1"
  HOME: %q
  PATH: %q
  %s: %q
---
You are a careful scout. PI-SYSTEM-MARK
`, piDir, piDir, filepath.Join(nm, ".bin")+":"+os.Getenv("PATH"), markKey, markVal))
	write(t, filepath.Join(cwd, ".reins", "config.yaml"), `
providers:
  openai:
    retry: {maxRetries: 0, initialDelay: 1ms, maxDelay: 1ms, jitter: 0}
`)
	testutil.Trust(t, home, cwd)
	h, err := harness.New(harness.Options{Home: home, Cwd: cwd, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(); noLeftovers(t, mark) })
	m, err := h.ResolveModel("openai/parent", url)
	if err != nil {
		t.Fatal(err)
	}
	return h, m, srv, home
}

func subagentEnd(t *testing.T, events []session.Event) session.SubagentEnd {
	t.Helper()
	for _, e := range events {
		if e.Type == session.TypeSubagentEnd {
			var d session.SubagentEnd
			if err := e.Decode(&d); err != nil {
				t.Fatal(err)
			}
			return d
		}
	}
	t.Fatal("no subagent/end")
	return session.SubagentEnd{}
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func noLeftovers(t *testing.T, marker string) {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		data, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(data, []byte{0}) {
			if string(kv) == marker {
				t.Errorf("process %s left behind", e.Name())
			}
		}
	}
}
