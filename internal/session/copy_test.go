package session

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinsdev/reins/internal/llm"
)

// A fork after a compaction (issue 28): the copy keeps context/compacted,
// so the child's history is the parent's — the summary, not the
// conversation it replaced. On main forkEvents dropped the event and the
// fork re-inflated the compacted conversation.
func TestAppendCopyKeepsCompaction(t *testing.T) {
	parent, err := Create(t.TempDir(), Header{ID: "parent"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer parent.Close()
	say := func(role llm.Role, s string) llm.Message {
		return llm.Message{Role: role, Content: []llm.Block{{Type: llm.BlockText, Text: s}}}
	}
	mustAppend := func(typ string, d any) Event {
		e, err := parent.Append(typ, d)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	mustAppend(TypeTurnStart, TurnStart{Turn: 1})
	// The task stays: a compaction never replaces the first prompt.
	mustAppend(TypeUserMessage, UserMessage{Message: say(llm.RoleUser, "TASK")})
	mustAppend(TypeAssistantMessage, AssistantMessage{Turn: 1, Message: say(llm.RoleAssistant, "ACK")})
	first := mustAppend(TypeUserMessage, UserMessage{Message: say(llm.RoleUser, "OLD-QUESTION")})
	last := mustAppend(TypeAssistantMessage, AssistantMessage{Turn: 1, Message: say(llm.RoleAssistant, "OLD-ANSWER")})
	mustAppend(TypeTurnEnd, TurnEnd{Turn: 1, Reason: ReasonCompleted})
	mustAppend(TypeContextCompacted, ContextCompacted{Summary: "SUMMARY", Replaces: SeqRange{FromSeq: first.Seq, ToSeq: last.Seq + 1}})
	mustAppend(TypeUserMessage, UserMessage{Message: say(llm.RoleUser, "NEW-QUESTION")})
	if err := parent.Flush(); err != nil {
		t.Fatal(err)
	}
	ld, err := Load(parent.Path())
	if err != nil {
		t.Fatal(err)
	}
	// What forkEvents copies: the conversation events and the compactions.
	var copied []Event
	for _, e := range ld.Events {
		switch e.Type {
		case TypeUserMessage, TypeAssistantMessage, TypeToolResult, TypeContextCompacted:
			copied = append(copied, e)
		}
	}
	want, err := History(ld.Events)
	if err != nil {
		t.Fatal(err)
	}

	child, err := Create(t.TempDir(), Header{ID: "child"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer child.Close()
	if _, err := child.Append(TypeTurnStart, TurnStart{Turn: 0}); err != nil { // as startFork does
		t.Fatal(err)
	}
	written, err := child.AppendCopy(copied)
	if err != nil {
		t.Fatal(err)
	}
	got, err := History(written)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("fork history differs from the parent's (-parent +fork):\n%s", diff)
	}
	if len(got) != 4 || got[0].Content[0].Text != "TASK" || !strings.Contains(got[2].Content[0].Text, "SUMMARY") || got[3].Content[0].Text != "NEW-QUESTION" {
		t.Fatalf("fork history %+v, want the task, the summary then NEW-QUESTION", got)
	}
}
