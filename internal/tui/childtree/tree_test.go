package childtree

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

var (
	t0    = time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC)
	plain = Styles{Dim: lipgloss.NewStyle(), Running: lipgloss.NewStyle(), Stop: func(r string) string { return r }}
)

func ev(t *testing.T, typ string, at time.Time, data any) session.Event {
	t.Helper()
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	e, err := session.NewEvent(typ, 0, at, b)
	if err != nil {
		panic(err)
	}
	return e
}

func draw(tr *Tree, root string, now time.Time) string {
	return strings.Join(tr.Render(root, now, 80, plain), "\n")
}

// TestTreeWithoutScreen: the tree on its own, as the screen feeds it: a
// subagent call's row at the call, an out-of-process child's early event
// waiting for its subagent/start, the latest activity escaped on one
// line, the settled row with the logged duration, and a call that
// started nothing dropping its row.
func TestTreeWithoutScreen(t *testing.T) {
	root := session.Header{ID: "root"}
	tr := New()
	if !tr.Empty() || tr.Running() {
		t.Fatal("a new tree is not empty")
	}
	tr.Event(root, ev(t, session.TypeToolCall, t0, session.ToolCall{CallID: "s1", Name: "subagent",
		Arguments: `{"description":"review it","prompt":"p","agent":"acpkid"}`}))
	if got := draw(tr, "root", t0); !strings.Contains(got, "◌ acpkid (…) review it  starting") {
		t.Fatalf("no row at the call:\n%s", got)
	}
	tap := session.Header{ID: "root/r1", ParentSession: "root"}
	if !tr.Known(tap, "root") || tr.Known(session.Header{ID: "other"}, "root") {
		t.Fatal("Known: the tap's events belong, another session's do not")
	}
	tr.Event(tap, ev(t, session.TypeToolCall, t0, session.ToolCall{CallID: "acp-1", Name: "execute"}))
	tr.Event(root, ev(t, session.TypeSubagentStart, t0, session.SubagentStart{RunID: "r1", Agent: "acpkid", Provider: "acp", Label: "review it"}))
	if got := draw(tr, "root", t0.Add(time.Second)); !strings.Contains(got, "◌ acpkid (acp) review it  running") ||
		!strings.Contains(got, "⋯ execute") || tr.Len() != 1 {
		t.Fatalf("the row did not take the child and its early call (%d rows):\n%s", tr.Len(), got)
	}
	tr.Event(tap, ev(t, session.TypeAssistantChunk, t0, session.AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Delta: "one\nnow \x1b[31mchecking"}}))
	if got := draw(tr, "root", t0); !strings.Contains(got, `“now \x1b[31mchecking”`) || strings.Contains(got, "\x1b") {
		t.Fatalf("the latest text, escaped:\n%q", got)
	}
	tr.Event(root, ev(t, session.TypeSubagentEnd, t0.Add(9*time.Second), session.SubagentEnd{RunID: "r1", StopReason: "completed", DurationMs: 2750}))
	if got := draw(tr, "root", t0.Add(time.Minute)); !strings.Contains(got, "● acpkid (acp) review it  completed  2.8s") || strings.Contains(got, "checking") || tr.Running() {
		t.Fatalf("settled row:\n%s", got)
	}
	tr.Event(root, ev(t, session.TypeToolCall, t0, session.ToolCall{CallID: "s2", Name: "subagent", Arguments: `{"prompt":"p"}`}))
	tr.Event(root, ev(t, session.TypeToolResult, t0, session.ToolResult{CallID: "s2", Content: "unknown agent", IsError: true}))
	if tr.Len() != 1 {
		t.Fatalf("a call that started nothing keeps its row: %d rows", tr.Len())
	}
}

// TestTreeBounds: past maxNodes children are counted, not kept, and the
// early events of children not yet started are held for at most
// maxPendingLive of them.
func TestTreeBounds(t *testing.T) {
	root := session.Header{ID: "root"}
	tr := New()
	for i := range maxNodes + 5 {
		tr.Event(root, ev(t, session.TypeSubagentStart, t0, session.SubagentStart{RunID: fmt.Sprint("r", i), Agent: "general"}))
	}
	lines := tr.Render("root", t0, 80, plain)
	if tr.Len() != maxNodes || lines[len(lines)-1] != "… and 5 more children" {
		t.Fatalf("%d rows, last line %q", tr.Len(), lines[len(lines)-1])
	}
	for i := range maxPendingLive + 10 {
		tap := session.Header{ID: fmt.Sprint("root/early", i), ParentSession: "root"}
		tr.Event(tap, ev(t, session.TypeStepStart, t0, session.StepStart{}))
	}
	if len(tr.pending) != maxPendingLive {
		t.Fatalf("%d children's early events held, want %d", len(tr.pending), maxPendingLive)
	}
}

// TestUsage (issue 48): an unknown cost and a zero one for tokens used
// (a pi child's, unpriced) read the same, "unpriced"; a price shows in
// dollars; before any token no cost is shown.
func TestUsage(t *testing.T) {
	zero, some := 0.0, 0.0123
	for _, c := range []struct {
		u    llm.Usage
		want string
	}{
		{llm.Usage{}, "0 tok"},
		{llm.Usage{InputTokens: 1000, OutputTokens: 200}, "1.2k tok unpriced"},
		{llm.Usage{InputTokens: 1000, OutputTokens: 200, CostUSD: &zero}, "1.2k tok unpriced"},
		{llm.Usage{InputTokens: 1000, OutputTokens: 200, CostUSD: &some}, "1.2k tok $0.0123"},
	} {
		if got := Usage(c.u); got != c.want {
			t.Errorf("Usage(%+v) = %q, want %q", c.u, got, c.want)
		}
	}
}
