package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/session"
)

// TestLiveChildRow (issue 30 item 6): a subagent call's row shows the
// moment the call is made (starting, before the child's subagent/start);
// an out-of-process child's events that come before its subagent/start
// wait for it; the row then shows the latest tool call or text line,
// escaped, one line, within the width; a settled row drops it.
func TestLiveChildRow(t *testing.T) {
	s := newScreen(t, "", nil)
	root := s.m.root
	s.m.running, s.m.turnStart = true, s.clock
	s.feedItems(s.ev(root, session.TypeToolCall, session.ToolCall{CallID: "s1", Name: "subagent",
		Arguments: `{"description":"review it","prompt":"p","agent":"acpkid"}`}))
	if v := s.view(); !strings.Contains(v, "◌ acpkid (…) review it  starting") {
		t.Fatalf("no row at the call:\n%s", v)
	}
	tap := session.Header{ID: root + "/r1", ParentSession: root}
	early := s.ev(root+"/r1", session.TypeToolCall, session.ToolCall{CallID: "acp-1", Name: "execute"})
	early.header = tap
	s.feedItems(early)
	s.feedItems(s.ev(root, session.TypeSubagentStart, session.SubagentStart{RunID: "r1", Agent: "acpkid", Provider: "acp", Label: "review it"}))
	v := s.view()
	if !strings.Contains(v, "◌ acpkid (acp) review it  running") || !strings.Contains(v, "⋯ execute") || strings.Count(v, "acpkid (") != 1 {
		t.Fatalf("the row did not take the child and its early call:\n%s", v)
	}
	text := s.ev(root+"/r1", session.TypeAssistantChunk, chunk("first line\nnow \x1b[31mchecking "+strings.Repeat("x", 200)))
	text.header = tap
	s.feedItems(text)
	v = s.view()
	if !strings.Contains(v, `“now \x1b[31mchecking xxx`) || strings.Contains(v, "⋯ execute") || strings.Contains(v, "\x1b[31m") {
		t.Fatalf("the row does not show the latest text, escaped:\n%q", v)
	}
	for _, l := range strings.Split(v, "\n") {
		if len([]rune(l)) > 80 {
			t.Errorf("line wider than the screen: %q", l)
		}
	}
	s.feedItems(s.ev(root, session.TypeSubagentEnd, session.SubagentEnd{RunID: "r1", StopReason: "completed"}))
	if v := s.view(); strings.Contains(v, "checking") || !strings.Contains(v, "● acpkid (acp) review it  completed") {
		t.Fatalf("settled row:\n%s", v)
	}
	// A call that never starts a child (refused) leaves no row.
	s.feedItems(s.ev(root, session.TypeToolCall, session.ToolCall{CallID: "s2", Name: "subagent", Arguments: `{"description":"nope","prompt":"p"}`}))
	if !strings.Contains(s.view(), "general (…) nope") {
		t.Fatalf("no row for the second call:\n%s", s.view())
	}
	s.feedItems(s.ev(root, session.TypeToolResult, session.ToolResult{CallID: "s2", Content: "unknown agent", IsError: true}))
	if strings.Contains(s.view(), "nope") {
		t.Fatalf("a call that started nothing keeps its row:\n%s", s.view())
	}
}

// TestChildDurationFromLog: a settled row's elapsed time is the duration
// subagent/end records, not the screen's clock.
func TestChildDurationFromLog(t *testing.T) {
	s := newScreen(t, "", nil)
	root := s.m.root
	s.m.running, s.m.turnStart = true, s.clock
	s.feedItems(s.ev(root, session.TypeSubagentStart, session.SubagentStart{RunID: "r1", Agent: "general", Provider: "inprocess", Label: "x"}))
	s.clock = s.clock.Add(9 * time.Second) // the screen saw the end late
	s.feedItems(s.ev(root, session.TypeSubagentEnd, session.SubagentEnd{RunID: "r1", StopReason: "completed", DurationMs: 2750}))
	if v := s.view(); !strings.Contains(v, "completed  2.8s") {
		t.Fatalf("settled row does not show the logged 2.75 s:\n%s", v)
	}
}
