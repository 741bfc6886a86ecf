package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

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
