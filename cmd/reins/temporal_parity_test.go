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

// parityScript is the children's model on either engine.
const parityScript = `replies:
  - {match: remember the word, text: noted, repeat: true}
  - {match: what was the word, text: asked, repeat: true}
  - {match: forked task, text: forked, repeat: true}
  - {match: live-a, toolCalls: [{name: bash, arguments: {command: echo live-stall}}], usage: {input: 3000, output: 0}, repeat: true}
  - {match: live-stall, fault: stall, repeat: true}
  - match: runaway tree
    repeat: true
    toolCalls:
      - {name: subagent, arguments: {description: left, prompt: "runaway tree"}}
      - {name: subagent, arguments: {description: right, prompt: "runaway tree"}}
    usage: {input: 1000, output: 0}
fallback:
  toolCalls:
    - {name: ls, arguments: {}}
  usage: {input: 1000, output: 0}
`

// parityEngine is one engine the parity table runs on: a parent session
// whose children run there, and the conversations of the child sessions
// it made (by session id).
type parityEngine struct {
	name          string
	session       func(t *testing.T, b *budget.Budget) *harness.Session
	conversations func(t *testing.T) map[string]string
}

// localParity runs the children in-process, on the same scripted model.
func localParity(t *testing.T, script string) parityEngine {
	cfg := filepath.Join(t.TempDir(), "local.yaml")
	os.WriteFile(cfg, []byte("subagents:\n  maxParallel: 20\n  maxBackgroundJobs: 20\n"), 0o644)
	home := t.TempDir()
	return parityEngine{
		name: "local",
		session: func(t *testing.T, b *budget.Budget) *harness.Session {
			h, err := harness.New(harness.Options{Home: home, Cwd: t.TempDir(), ConfigFile: cfg, Sandbox: "off",
				Getenv: func(k string) string {
					if k == "REINS_MOCK_SCRIPT" {
						return script
					}
					return ""
				}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Close() })
			m, err := h.ResolveModel("mock/echo", "")
			if err != nil {
				t.Fatal(err)
			}
			sess, err := h.NewSession(harness.SessionOptions{Model: m, MaxSteps: 30, Budget: b})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sess.Close() })
			return sess
		},
		conversations: func(t *testing.T) map[string]string { return conversationsIn(t, home) },
	}
}

// conversationsIn are the user and assistant texts of each session log
// under home, one string per session id.
func conversationsIn(t *testing.T, home string) map[string]string {
	t.Helper()
	out, err := readConversations(home)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readConversations is conversationsIn for logs that may still be being
// written: the first log it cannot load is its error.
func readConversations(home string) (map[string]string, error) {
	ents, _ := os.ReadDir(filepath.Join(home, "sessions"))
	out := map[string]string{}
	for _, e := range ents {
		ld, err := session.Load(filepath.Join(home, "sessions", e.Name(), session.FileName))
		if err != nil {
			return out, err
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
		out[e.Name()] = b.String()
	}
	return out, nil
}

// TestEngineParity is issue 28's acceptance 1: one table of continuation,
// fork and budget cases, run on the local engine and on the temporal
// engine (the real dev server, reins-temporal helper and `reins worker`).
// On the old temporal engine each was dropped silently: the continuation
// ran as a new child that never saw its first prompt, the fork saw none of
// the parent's conversation, and the budget neither reached the child (it
// looped to its step limit) nor was charged in the parent; a runaway tree
// under 20,000 tokens made 39,629 requests.
func TestEngineParity(t *testing.T) {
	script := filepath.Join(t.TempDir(), "child.yaml")
	os.WriteFile(script, []byte(parityScript), 0o644)
	t.Run("local", func(t *testing.T) { parityTable(t, localParity(t, script)) })
	t.Run("temporal", func(t *testing.T) {
		cfg, stopServer := temporalSetup(t)
		defer stopServer()
		w := startWorker(t, cfg, script)
		defer w.stop()
		parityTable(t, parityEngine{
			name:          "temporal",
			session:       func(t *testing.T, b *budget.Budget) *harness.Session { return paritySession(t, cfg, b) },
			conversations: func(t *testing.T) map[string]string { return conversationsIn(t, w.home) },
		})
	})
}

// newConversations are the conversations of the sessions made since
// before (an earlier conversations call).
func newConversations(all, before map[string]string) []string {
	var out []string
	for id, c := range all {
		if _, ok := before[id]; !ok {
			out = append(out, c)
		}
	}
	return out
}

func parityTable(t *testing.T, e parityEngine) {
	t.Run("continue", func(t *testing.T) {
		sess := e.session(t, nil)
		r1 := sess.Subagents.Delegate(t.Context(), subagent.Params{Description: "first", Prompt: "remember the word PELICAN"})
		m := childLine.FindStringSubmatch(r1.Content)
		if r1.IsError || !strings.HasPrefix(r1.Content, "noted") || m == nil {
			t.Fatalf("first run: %+v", r1)
		}
		r2 := sess.Subagents.Delegate(t.Context(), subagent.Params{Description: "again", Prompt: "what was the word?", Continue: m[1]})
		if r2.IsError || !strings.HasPrefix(r2.Content, "asked") || !strings.Contains(r2.Content, "child: "+m[1]) {
			t.Fatalf("continuation: %+v", r2)
		}
		// The continuation's child had the whole earlier conversation: its
		// log holds the first prompt and answer before the follow-up.
		want := "user: remember the word PELICAN\nassistant: noted\nuser: what was the word?\nassistant: asked\n"
		found := false
		for _, c := range e.conversations(t) {
			found = found || c == want
		}
		if !found {
			t.Errorf("no child continued the conversation; want a log holding\n%s\nhave %q", want, e.conversations(t))
		}
	})

	t.Run("fork", func(t *testing.T) {
		sess := e.session(t, nil)
		if _, err := sess.Log.Append(session.TypeUserMessage, session.UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "PARENT-SECRET 4711"}}}}); err != nil {
			t.Fatal(err)
		}
		r := sess.Subagents.Delegate(t.Context(), subagent.Params{Description: "fork", Prompt: "forked task", Fork: true})
		if r.IsError || !strings.HasPrefix(r.Content, "forked") {
			t.Fatalf("fork: %+v", r)
		}
		want := "user: PARENT-SECRET 4711\nuser: forked task\nassistant: forked\n"
		found := false
		for _, c := range e.conversations(t) {
			found = found || c == want
		}
		if !found {
			t.Errorf("no child started from the parent's conversation; want\n%s\nhave %q", want, e.conversations(t))
		}
	})

	t.Run("budget", func(t *testing.T) {
		// Each of the child's responses is 1,000 tokens and asks for
		// another step; the parent's budget is 5,000.
		b := budget.New(budget.Limits{Tokens: 5000})
		defer b.Stop()
		sess := e.session(t, b)
		before := e.conversations(t)
		r := sess.Subagents.Delegate(t.Context(), subagent.Params{Description: "runaway", Prompt: "loop"})
		if !strings.Contains(r.Content, "category: budget") {
			t.Errorf("result %q, want the budget's diagnostic", r.Content)
		}
		tok := usedTokens(b)
		if b.Err() == nil || tok < 5000 {
			t.Errorf("the parent's budget counted %d tokens (err %v); want the child's 5000 or more", tok, b.Err())
		}
		// The child stopped within one response of the budget: 5
		// responses reach 5,000 tokens.
		for _, c := range newConversations(e.conversations(t), before) {
			if n := strings.Count(c, "assistant: "); n > 6 {
				t.Errorf("a child made %d responses under a 5,000-token budget", n)
			}
		}
		if tok > 6000 {
			t.Errorf("the parent's budget counted %d tokens, more than one response past 5,000", tok)
		}
	})

	t.Run("runaway-tree", func(t *testing.T) {
		// Every agent of the tree asks for two more children with each
		// 1,000-token response (maxDepth 3: seven agents, the deepest four
		// refused and asking again) under the 20,000 tokens. The
		// tree stops within one response per running agent: at most 20
		// responses reach the budget, each agent may have one more in
		// flight.
		b := budget.New(budget.Limits{Tokens: 20000})
		defer b.Stop()
		sess := e.session(t, b)
		before := e.conversations(t)
		r := sess.Subagents.Delegate(t.Context(), subagent.Params{Description: "tree", Prompt: "runaway tree"})
		if !strings.Contains(r.Content, "category: budget") {
			t.Errorf("result %q, want the budget's diagnostic", r.Content)
		}
		agents, responses := 0, 0
		for _, c := range newConversations(e.conversations(t), before) {
			if n := strings.Count(c, "assistant: "); n > 0 {
				agents++
				responses += n
			}
		}
		tok := usedTokens(b)
		t.Logf("%s: %d agents made %d responses; the parent's budget counted %d tokens", e.name, agents, responses, tok)
		if agents < 2 || agents > 7 {
			t.Errorf("%d agents answered, want the tree's 2 to 7", agents)
		}
		if responses > 20+agents {
			t.Errorf("%d responses under 20,000 tokens, more than 20 + one per agent (%d)", responses, agents)
		}
		if b.Err() == nil || tok < 20000 || tok > 20000+1000*agents {
			t.Errorf("the parent's budget counted %d tokens (err %v), want 20,000 to %d", tok, b.Err(), 20000+1000*agents)
		}
	})

	t.Run("budget-live", func(t *testing.T) {
		// Two children each spend 3,000 tokens and then wait on a model
		// that never answers: neither reaches the 5,000 it was given, only
		// their sum does. The parent counts their spend as it happens (on
		// temporal, as the worker heartbeats it), runs out, and cancels
		// both. Without the live count both would wait for ever (bounded
		// here).
		b := budget.New(budget.Limits{Tokens: 5000})
		defer b.Stop()
		sess := e.session(t, b)
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
