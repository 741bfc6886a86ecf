package childtree

import (
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/session"
)

// TestRefusedRow (issue 48 item 3): a child whose call was refused says
// so in its row and under it, the refusal escaped; a failed call that is
// no refusal, or another session's refusal, does not count.
func TestRefusedRow(t *testing.T) {
	root, child := session.Header{ID: "root"}, session.Header{ID: "kid", ParentSession: "root"}
	tr := New()
	tr.Event(root, ev(t, session.TypeSubagentStart, t0, session.SubagentStart{RunID: "r1", ChildSession: "kid", Agent: "general", Provider: "inprocess", Label: "tidy"}))
	calls := []struct {
		id, name, content string
		isError           bool
	}{
		{"w1", "write", "the write call was not approved. The user says instead: \x1b[2Jno", true},
		{"b1", "bash", "make: Error 1\n[exit code 2]", true},
		{"e1", "edit", "the edit call is denied by the permission rule edit(*)", true},
		{"r1", "read", "the write call was not approved", true}, // another tool's text
	}
	for _, c := range calls {
		tr.Event(child, ev(t, session.TypeToolCall, t0, session.ToolCall{CallID: c.id, Name: c.name}))
		tr.Event(child, ev(t, session.TypeToolResult, t0, session.ToolResult{CallID: c.id, Content: c.content, IsError: c.isError}))
	}
	tr.Event(root, ev(t, session.TypeSubagentEnd, t0.Add(time.Second), session.SubagentEnd{RunID: "r1", StopReason: "completed"}))
	got := draw(tr, "root", t0.Add(time.Second))
	if !strings.Contains(got, "completed (2 refused)") {
		t.Errorf("the row does not count the refusals:\n%s", got)
	}
	if !strings.Contains(got, `refused: the write call was not approved. The user says instead: \x1b[2Jno`) {
		t.Errorf("the first refusal is not under the row, escaped:\n%q", got)
	}
}
