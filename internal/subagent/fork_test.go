package subagent

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

// A fork after a compaction (issue 28) starts from the parent's compacted
// history: forkEvents keeps context/compacted (main dropped it and the
// fork re-inflated the conversation the summary replaced).
func TestForkEventsKeepCompaction(t *testing.T) {
	m := managerWith(t, &keepProvider{}, config.Subagents{})
	say := func(role llm.Role, s string) llm.Message {
		return llm.Message{Role: role, Content: []llm.Block{{Type: llm.BlockText, Text: s}}}
	}
	app := func(typ string, d any) session.Event {
		e, err := m.Log.Append(typ, d)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	app(session.TypeTurnStart, session.TurnStart{Turn: 1})
	// The task stays: a compaction never replaces the first prompt.
	app(session.TypeUserMessage, session.UserMessage{Message: say(llm.RoleUser, "TASK")})
	app(session.TypeAssistantMessage, session.AssistantMessage{Turn: 1, Message: say(llm.RoleAssistant, "ACK")})
	a := app(session.TypeUserMessage, session.UserMessage{Message: say(llm.RoleUser, "OLD")})
	b := app(session.TypeAssistantMessage, session.AssistantMessage{Turn: 1, Message: say(llm.RoleAssistant, "OLD-ANSWER")})
	app(session.TypeContextCompacted, session.ContextCompacted{Summary: "SUMMARY", Replaces: session.SeqRange{FromSeq: a.Seq, ToSeq: b.Seq}})
	app(session.TypeUserMessage, session.UserMessage{Message: say(llm.RoleUser, "NEW")})

	evs, err := m.forkEvents(&config.Agent{Name: "general"})
	if err != nil {
		t.Fatal(err)
	}
	child, err := session.Create(t.TempDir(), session.Header{ID: "fork"}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer child.Close()
	written, err := child.AppendCopy(evs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := session.History(written)
	if err != nil {
		t.Fatal(err)
	}
	want, err := session.History(evs)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 4 || llm.BlocksText(want[0].Content) != "TASK" || llm.BlocksText(want[3].Content) != "NEW" {
		t.Fatalf("parent history %+v, want the task, the summary then NEW", want)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("fork history (-parent +fork):\n%s", diff)
	}
}
