package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/engine"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
)

// paritySession is a parent session whose children run on the temporal
// engine through the real reins-temporal helper, the real dev server and
// a real `reins worker` (whose children's model answers from its script).
// The test drives the subagent tool directly (Manager.Delegate), as the
// parent's model would, so it can name the child id it was handed.
func paritySession(t *testing.T, cfg string, b *budget.Budget) *harness.Session {
	t.Helper()
	h, err := harness.New(harness.Options{Home: t.TempDir(), Cwd: t.TempDir(), ConfigFile: cfg, Sandbox: "off",
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	m, err := h.ResolveModel("mock/echo", "")
	if err != nil {
		t.Fatal(err)
	}
	eng, closeEng, err := engine.Open(h.Config.Subagents, "mock/echo", h.Logf)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := h.NewSession(harness.SessionOptions{Model: m, MaxSteps: 30, Budget: b})
	if err != nil {
		closeEng()
		t.Fatal(err)
	}
	sess.Subagents.Engine = eng
	t.Cleanup(func() { sess.Close(); closeEng() })
	return sess
}

var childLine = regexp.MustCompile(`child: (child-[0-9a-f]{8})`)

// workerConversations are the user and assistant texts of each session
// log on the worker, one string per session.
func workerConversations(t *testing.T, w *workerProc) []string {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Join(w.home, "sessions"))
	var out []string
	for _, e := range ents {
		ld, err := session.Load(filepath.Join(w.home, "sessions", e.Name(), session.FileName))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, ev := range ld.Events {
			switch ev.Type {
			case session.TypeUserMessage:
				var d session.UserMessage
				ev.Decode(&d)
				b.WriteString("user: " + llm.BlocksText(d.Message.Content) + "\n")
			case session.TypeAssistantMessage:
				var d session.AssistantMessage
				ev.Decode(&d)
				b.WriteString("assistant: " + llm.BlocksText(d.Message.Content) + "\n")
			}
		}
		out = append(out, b.String())
	}
	return out
}

// TestTemporalParity is issue 28's acceptance 1 on the temporal engine:
// a continuation, a fork and a budget behave as for a local child. On
// the old engine each was dropped silently: the continuation ran as a
// new child that never saw its first prompt, the fork saw none of the
// parent's conversation, and the budget neither reached the child (it
// looped to its step limit) nor was charged in the parent.
func TestTemporalParity(t *testing.T) {
	cfg, stopServer := temporalSetup(t)
	defer stopServer()
	script := filepath.Join(t.TempDir(), "child.yaml")
	os.WriteFile(script, []byte(`replies:
  - {match: remember the word, text: noted, repeat: true}
  - {match: what was the word, text: asked, repeat: true}
  - {match: forked task, text: forked, repeat: true}
  - {match: live-a, toolCalls: [{name: bash, arguments: {command: echo live-stall}}], usage: {input: 3000, output: 0}, repeat: true}
  - {match: live-stall, fault: stall, repeat: true}
fallback:
  toolCalls:
    - {name: ls, arguments: {}}
  usage: {input: 1000, output: 0}
`), 0o644)
	w := startWorker(t, cfg, script)
	defer w.stop()

	t.Run("continue", func(t *testing.T) {
		sess := paritySession(t, cfg, nil)
		r1 := sess.Subagents.Delegate(t.Context(), subagent.Params{Description: "first", Prompt: "remember the word PELICAN"})
		m := childLine.FindStringSubmatch(r1.Content)
		if r1.IsError || !strings.HasPrefix(r1.Content, "noted") || m == nil {
			t.Fatalf("first run: %+v\nworker: %s", r1, w.errb.Bytes())
		}
		r2 := sess.Subagents.Delegate(t.Context(), subagent.Params{Description: "again", Prompt: "what was the word?", Continue: m[1]})
		if r2.IsError || !strings.HasPrefix(r2.Content, "asked") || !strings.Contains(r2.Content, "child: "+m[1]) {
			t.Fatalf("continuation: %+v", r2)
		}
		// The continuation's child on the worker had the whole earlier
		// conversation: its log holds the first prompt and answer before
		// the follow-up.
		want := "user: remember the word PELICAN\nassistant: noted\nuser: what was the word?\nassistant: asked\n"
		found := false
		for _, c := range workerConversations(t, w) {
			found = found || c == want
		}
		if !found {
			t.Errorf("no child on the worker continued the conversation; want a log holding\n%s\nhave %q", want, workerConversations(t, w))
		}
	})

	t.Run("fork", func(t *testing.T) {
		sess := paritySession(t, cfg, nil)
		if _, err := sess.Log.Append(session.TypeUserMessage, session.UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "PARENT-SECRET 4711"}}}}); err != nil {
			t.Fatal(err)
		}
		r := sess.Subagents.Delegate(t.Context(), subagent.Params{Description: "fork", Prompt: "forked task", Fork: true})
		if r.IsError || !strings.HasPrefix(r.Content, "forked") {
			t.Fatalf("fork: %+v", r)
		}
		want := "user: PARENT-SECRET 4711\nuser: forked task\nassistant: forked\n"
		found := false
		for _, c := range workerConversations(t, w) {
			found = found || c == want
		}
		if !found {
			t.Errorf("no child on the worker started from the parent's conversation; want\n%s\nhave %q", want, workerConversations(t, w))
		}
	})

	t.Run("budget", func(t *testing.T) {
		// Each of the child's responses is 1,000 tokens and asks for
		// another step; the parent's budget is 5,000.
		b := budget.New(budget.Limits{Tokens: 5000})
		defer b.Stop()
		sess := paritySession(t, cfg, b)
		r := sess.Subagents.Delegate(t.Context(), subagent.Params{Description: "runaway", Prompt: "loop"})
		if !strings.Contains(r.Content, "category: budget") {
			t.Errorf("result %q, want the budget's diagnostic", r.Content)
		}
		tok, _, _, _ := b.Used()
		if b.Err() == nil || tok < 5000 {
			t.Errorf("the parent's budget counted %d tokens (err %v); want the child's 5000 or more", tok, b.Err())
		}
		// The child stopped within one response of the budget: 5
		// responses reach 5,000 tokens.
		for _, c := range workerConversations(t, w) {
			if n := strings.Count(c, "assistant: "); n > 6 {
				t.Errorf("a child on the worker made %d responses under a 5,000-token budget", n)
			}
		}
		if tok > 6000 {
			t.Errorf("the parent's budget counted %d tokens, more than one response past 5,000", tok)
		}
	})

	t.Run("budget-live", func(t *testing.T) {
		// Two children on the worker each spend 3,000 tokens and then
		// wait on a model that never answers: neither reaches the 5,000
		// it was given, only their sum does. The parent counts their
		// spend as the worker heartbeats it, runs out, and cancels both.
		// Without the live count both would wait for ever (bounded here).
		b := budget.New(budget.Limits{Tokens: 5000})
		defer b.Stop()
		sess := paritySession(t, cfg, b)
		for _, p := range []string{"live-a one", "live-a two"} {
			if r := sess.Subagents.Delegate(t.Context(), subagent.Params{Description: p, Prompt: p, RunInBackground: true}); r.IsError {
				t.Fatalf("start %s: %+v", p, r)
			}
		}
		ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
		defer cancel()
		for sess.Subagents.Busy() {
			if sess.Subagents.WaitSettled(ctx) != nil {
				t.Fatalf("the children still run after 120 s; the parent's budget counted %v (err %v)", usedTokens(b), b.Err())
			}
			sess.Subagents.Drain(func(string, any) {})
		}
		if b.Err() == nil || usedTokens(b) < 6000 {
			t.Errorf("the parent's budget counted %d tokens (err %v), want both children's 6000", usedTokens(b), b.Err())
		}
		for _, id := range []string{"job-1", "job-2"} {
			if r := sess.Subagents.JobOutput(id); !strings.Contains(r.Content, "category: budget") {
				t.Errorf("%s: %q, want the budget's diagnostic", id, r.Content)
			}
		}
	})
}

func usedTokens(b *budget.Budget) int {
	tok, _, _, _ := b.Used()
	return tok
}
