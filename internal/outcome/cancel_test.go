package outcome

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

func interrupted(blocks ...llm.Block) session.Event {
	return ev(session.TypeAssistantMessage, session.AssistantMessage{Step: 2, Interrupted: true,
		Message: llm.Message{Role: llm.RoleAssistant, Content: blocks}})
}

// Seed 000's cancel rule, as each placement feeds the one fold: a child
// cancelled while streaming a later step reports its earlier complete
// message, not the cut step's partial text; a child cancelled in its first
// step reports what it streamed. The stop reason (aborted) records the cut:
// that is Settle's and the placement's part, checked in their packages.
func TestFoldCancelRulePerPlacement(t *testing.T) {
	stepEnd := ev(session.TypeStepEnd, session.StepEnd{})
	turnEnd := ev(session.TypeTurnEnd, session.TurnEnd{Turn: 1, Reason: session.ReasonAborted})
	type feed func(*Fold)
	events := func(es ...session.Event) feed {
		return func(f *Fold) {
			for _, e := range es {
				f.Push(e)
			}
		}
	}
	tests := []struct {
		placement string
		feed      feed
		want      []llm.Block
	}{
		// In-process and reins children: the child's session events (the
		// cut step's message is written with interrupted set).
		{"inprocess/reins: later step cut", events(
			delta("EARLIER-COMPLETE"), msg(text("EARLIER-COMPLETE")), stepEnd,
			delta("LATE-PARTIAL"), interrupted(text("LATE-PARTIAL")), turnEnd,
		), []llm.Block{text("EARLIER-COMPLETE")}},
		{"inprocess/reins: first step cut", events(
			delta("ONLY-"), delta("PARTIAL"), interrupted(text("ONLY-PARTIAL")), turnEnd,
		), []llm.Block{text("ONLY-PARTIAL")}},
		{"inprocess/reins: cut step's chunks not logged", events(
			msg(text("EARLIER-COMPLETE")), stepEnd, interrupted(text("LATE-PARTIAL")), turnEnd,
		), []llm.Block{text("EARLIER-COMPLETE")}},
		// pi children: wrap folds raw deltas, complete messages, and an
		// aborted message as a partial.
		{"pi: later step aborted", func(f *Fold) {
			f.PushText("EARLIER-COMPLETE")
			f.PushMessage(llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{text("EARLIER-COMPLETE")}})
			f.PushText("LATE-PARTIAL")
			f.PushPartial(llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{text("LATE-PARTIAL")}})
		}, []llm.Block{text("EARLIER-COMPLETE")}},
		{"pi: first step aborted", func(f *Fold) {
			f.PushText("ONLY-PARTIAL")
			f.PushPartial(llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{text("ONLY-PARTIAL")}})
		}, []llm.Block{text("ONLY-PARTIAL")}},
		// ACP children expose no messages: streamed text is all there is,
		// and all of it is the answer.
		{"acp: cut while streaming", func(f *Fold) {
			f.PushText("SOME-")
			f.PushText("TEXT")
		}, []llm.Block{text("SOME-TEXT")}},
	}
	for _, tc := range tests {
		t.Run(tc.placement, func(t *testing.T) {
			var f Fold
			tc.feed(&f)
			if diff := cmp.Diff(tc.want, f.Collect()); diff != "" {
				t.Fatalf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// The rendered result of such a child names the cut and carries the
// earlier complete answer, never the late partial.
func TestRenderCancelledKeepsEarlierAnswer(t *testing.T) {
	out := FinalOutput([]session.Event{
		msg(text("EARLIER-COMPLETE")), ev(session.TypeStepEnd, session.StepEnd{}),
		interrupted(text("LATE-PARTIAL")),
	})
	r := Settle(Result{Output: out, StopReason: StopReasonOf(session.ReasonAborted)})
	content, isErr := RenderText(r)
	want := "Error: subagent run was cancelled\nPartial output before the run ended:\nEARLIER-COMPLETE"
	if !isErr || content != want {
		t.Fatalf("rendered %q (isError %v), want %q", content, isErr, want)
	}
}
