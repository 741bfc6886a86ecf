package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/models"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// TestChildCompactsAgainstItsOwnWindow: a child on a model with a small
// window (config `models:`) compacts against that window, while its parent,
// on a model whose window is unknown, does not (Claude Code #83355: a
// subagent that compacted against its parent's window died with a 400).
func TestChildCompactsAgainstItsOwnWindow(t *testing.T) {
	const files = 8
	var sb strings.Builder
	sb.WriteString(`
replies:
  - {match: "Summarize this earlier part", text: "the child read files one after another", repeat: true}
  - match: delegate-reading
    toolCalls: [{id: p1, name: subagent, arguments: {description: read the chain, prompt: "CHILD-TASK read f1.txt", agent: small}}]
  - match: CHILD-TASK
    toolCalls: [{name: read, arguments: {path: f1.txt}}]
`)
	ws := map[string]string{
		".reins/config.yaml":     "models:\n  openai/small: {contextWindow: 3000}\n",
		".reins/agents/small.md": "---\nname: small\ndescription: reads\nmodel: openai/small\ntools: [read]\n---\nRead what you are told.\n",
	}
	for i := 1; i <= files; i++ {
		next := fmt.Sprintf("    toolCalls: [{name: read, arguments: {path: f%d.txt}}]\n", i+1)
		if i == files {
			next = "    text: CHILD-DONE\n"
		}
		fmt.Fprintf(&sb, "  - match: FILE-%d-\n%s", i, next)
		ws[fmt.Sprintf("f%d.txt", i)] = fmt.Sprintf("FILE-%d-", i) + strings.Repeat("x", 2400) + "\n"
	}
	sb.WriteString("  - {match: CHILD-DONE, text: parent done}\n")
	f := newFixture(t, sb.String(), ws)
	s := f.session(t)
	res := s.Run(context.Background(), "delegate-reading")
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn %+v", res)
	}
	s.Log.Flush()
	events := loadEvents(t, s.Log.Path())
	if n := len(testutil.Decoded[session.ContextCompacted](t, events, session.TypeContextCompacted)); n != 0 {
		t.Fatalf("the parent compacted %d times", n)
	}
	starts := testutil.Decoded[session.SubagentStart](t, events, session.TypeSubagentStart)
	ends := testutil.Decoded[session.SubagentEnd](t, events, session.TypeSubagentEnd)
	if len(starts) != 1 || len(ends) != 1 || ends[0].StopReason != "completed" {
		t.Fatalf("child starts %+v ends %+v", starts, ends)
	}
	child := loadEvents(t, filepath.Join(f.h.SessionsDir(), starts[0].ChildSession, session.FileName))
	cs := testutil.Decoded[session.ContextCompacted](t, child, session.TypeContextCompacted)
	if len(cs) == 0 {
		t.Fatal("the child never compacted against its 3,000-token window")
	}
	// Every request the child sent after its first compaction fits its
	// window by the mock's own estimate of the body.
	for _, r := range f.srv.Requests() {
		if strings.Contains(string(r.Body), "CHILD-TASK") && len(r.Body) > 3000*4*2 {
			t.Errorf("a child request of %d bytes", len(r.Body))
		}
	}
	t.Logf("child compacted %d times", len(cs))
}

// TestAnthropicCacheBreakpoints is acceptance 4 of issue 18: on the
// Anthropic wire every request of a 20-step session carries one to four
// cache breakpoints, and the input billed with the (simulated) cache —
// reads at the cache-read price, writes at the cache-write price — is
// printed next to what the same tokens cost uncached.
func TestAnthropicCacheBreakpoints(t *testing.T) {
	const steps = 20
	var sb strings.Builder
	sb.WriteString("replies:\n  - match: CHAIN-START\n    toolCalls: [{name: read, arguments: {path: f1.txt}}]\n")
	ws := map[string]string{}
	for i := 1; i <= steps; i++ {
		next := fmt.Sprintf("    toolCalls: [{name: read, arguments: {path: f%d.txt}}]\n", i+1)
		if i == steps {
			next = "    text: chain done\n"
		}
		fmt.Fprintf(&sb, "  - match: LINK-%d-\n%s", i, next)
		ws[fmt.Sprintf("f%d.txt", i)] = fmt.Sprintf("LINK-%d-", i) + strings.Repeat("y", 600) + "\n"
	}
	f := newFixture(t, sb.String(), ws)
	m, err := f.h.ResolveModel("anthropic/claude-sonnet-4-5", f.url)
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.h.NewSession(SessionOptions{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if res := s.Run(context.Background(), "CHAIN-START follow the files"); res.Reason != session.ReasonCompleted {
		t.Fatalf("turn %+v", res)
	}
	reqs := f.srv.Requests()
	if len(reqs) != steps+1 {
		t.Fatalf("%d requests, want %d", len(reqs), steps+1)
	}
	lo, hi := 4, 1
	for i, r := range reqs {
		n := strings.Count(string(r.Body), `"cache_control":{"type":"ephemeral"}`)
		if n < 1 || n > 4 {
			t.Fatalf("request %d carries %d breakpoints", i, n)
		}
		lo, hi = min(lo, n), max(hi, n)
	}
	t.Logf("breakpoints per request: %d to %d", lo, hi)
	s.Log.Flush()
	var u llm.Usage
	for _, d := range testutil.Decoded[session.AssistantMessage](t, loadEvents(t, s.Log.Path()), session.TypeAssistantMessage) {
		if d.Usage != nil {
			u = u.Add(*d.Usage)
		}
	}
	price := models.Lookup(nil, "anthropic/claude-sonnet-4-5").Price
	in := u
	in.OutputTokens = 0
	billed := *models.Cost(price, in)
	uncached := float64(u.InputTokens) * *price.Input / 1e6
	t.Logf("%d requests: input %d tokens (cache reads %d, writes %d); billed input $%.4f with the cache, $%.4f uncached (%.0f%%)",
		len(reqs), u.InputTokens, u.CacheReadTokens, u.CacheWriteTokens, billed, uncached, 100*billed/uncached)
	if u.CacheReadTokens == 0 || billed >= uncached {
		t.Fatalf("the cache saved nothing: %+v", u)
	}
}
