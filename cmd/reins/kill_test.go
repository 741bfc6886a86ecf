package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/testutil"
)

// TestSIGKILLLeavesNothing kills `reins run` with SIGKILL — no handler, no
// teardown — while its descendants run, and requires every one of them to
// be gone 2 s later: a bash command with a setsid daemon, a background
// job and a double fork; an ACP child whose grandchild runs; a pi child.
// Every process reins starts runs under the sandbox supervisor, which
// notices that reins died and kills what it supervises (issue 12,
// finding 4).
func TestSIGKILLLeavesNothing(t *testing.T) {
	childScript := filepath.Join(testutil.RepoRoot(t), "internal", "subagent", "acpchild", "testdata", "child.mjs")
	cases := []struct {
		name   string
		script string
		agents func(t *testing.T, url string) map[string]string
		// ready reports that every descendant the case expects is up.
		ready func(procs []testutil.Proc) bool
	}{
		{
			name: "bash with setsid and background sleeps",
			script: `
replies:
  - toolCalls:
      - {id: c1, name: bash, arguments: {command: "setsid -f sleep 301; (sleep 302 &); sleep 303 & sleep 304"}}
  - {fault: stall, repeat: true}
`,
			ready: has("sleep 301", "sleep 302", "sleep 303", "sleep 304"),
		},
		{
			name: "ACP child with a grandchild",
			script: `
replies:
  - toolCalls:
      - {id: c1, name: subagent, arguments: {description: acp child, agent: acpgc, prompt: go}}
  - {fault: stall, repeat: true}
`,
			agents: func(t *testing.T, _ string) map[string]string {
				testutil.Peers(t)
				return map[string]string{"acpgc": fmt.Sprintf(`---
name: acpgc
description: an ACP child that leaves a grandchild
provider: acp
command: node
args: [%q]
env:
  ACP_SCENARIO: grandchild
  ACP_THEN: hang
  ACP_SDK_PATH: %q
---
`, childScript, filepath.Join(testutil.Peers(t), "@agentclientprotocol", "sdk", "dist", "v1", "stable", "acp.js"))}
			},
			ready: has("node ", "sleep 300"),
		},
		{
			name: "pi child",
			script: `
replies:
  - match: delegate
    toolCalls:
      - {id: c1, name: subagent, arguments: {description: pi child, agent: pichild, prompt: PI-CHILD work}}
  - {fault: stall, repeat: true}
`,
			agents: func(t *testing.T, url string) map[string]string {
				nm := testutil.Peers(t)
				piDir := t.TempDir()
				models, _ := json.Marshal(map[string]any{"providers": map[string]any{"reins-mock": map[string]any{
					"baseUrl": url + "/v1", "api": "openai-completions", "apiKey": "mock-key",
					"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
					"models": []any{map[string]any{"id": "mock-model"}},
				}}})
				if err := os.WriteFile(filepath.Join(piDir, "models.json"), models, 0o644); err != nil {
					t.Fatal(err)
				}
				return map[string]string{"pichild": fmt.Sprintf(`---
name: pichild
description: a pi child
provider: pi
model: reins-mock/mock-model
sandbox: {writable: [%q]}
env:
  PI_CODING_AGENT_DIR: %q
  PI_OFFLINE: "1"
  HOME: %q
  PATH: %q
---
`, piDir, piDir, piDir, filepath.Join(nm, ".bin")+":"+os.Getenv("PATH"))}
			},
			ready: has("/.bin/pi "),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc, err := mock.Parse([]byte(c.script))
			if err != nil {
				t.Fatal(err)
			}
			url, _, stop := mock.StartTest(sc)
			t.Cleanup(stop)
			home := t.TempDir()
			if c.agents != nil {
				for name, body := range c.agents(t, url) {
					p := filepath.Join(home, "agents", name+".md")
					os.MkdirAll(filepath.Dir(p), 0o755)
					if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			cmd := reinsCmd(t, home, "run", "--base-url", url, "-m", "openai/m", "delegate")
			mark := markOf(cmd.Env)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			defer func() { cmd.Process.Kill(); <-done }()

			deadline := time.Now().Add(90 * time.Second)
			for {
				procs := testutil.Marked(mark)
				if c.ready(procs) {
					break
				}
				select {
				case <-done:
					t.Fatalf("reins ended before its descendants were up: %v", cmd.ProcessState)
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("descendants never came up; running: %v", procs)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-done
			if left := testutil.LeftBehind(mark, testutil.OrphanWait); len(left) > 0 {
				for _, p := range left {
					syscall.Kill(p.PID, syscall.SIGKILL)
				}
				t.Fatalf("still alive %s after reins was killed with SIGKILL: %v", testutil.OrphanWait, left)
			}
		})
	}
}

// has reports whether, for every want, a process's command line holds it.
func has(want ...string) func([]testutil.Proc) bool {
	return func(procs []testutil.Proc) bool {
		for _, w := range want {
			found := false
			for _, p := range procs {
				if strings.HasPrefix(p.Cmdline, w) || strings.Contains(p.Cmdline, w) && !strings.Contains(p.Cmdline, "__reins-supervise") {
					found = true
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
}

// markOf is the value of the test mark in an environment list.
func markOf(env []string) string {
	m := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, testutil.MarkEnv+"="); ok {
			m = v
		}
	}
	return m
}
