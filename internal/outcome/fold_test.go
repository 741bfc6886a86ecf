package outcome

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

func ev(typ string, data any) session.Event {
	raw, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	e, err := session.NewEvent(typ, 0, time.Time{}, raw)
	if err != nil {
		panic(err)
	}
	return e
}

// readEvent is an event as a reader of the log gets it, its payload decoded
// from data; ok is false when data does not decode as typ's payload (the
// log would be corrupt and never reach a fold).
func readEvent(typ string, data []byte) (session.Event, bool) {
	e, err := session.NewEvent(typ, 0, time.Time{}, data)
	return e, err == nil
}

func msg(blocks ...llm.Block) session.Event {
	if blocks == nil {
		blocks = []llm.Block{}
	}
	return ev(session.TypeAssistantMessage, session.AssistantMessage{Message: llm.Message{Role: llm.RoleAssistant, Content: blocks}})
}

func text(s string) llm.Block      { return llm.Block{Type: llm.BlockText, Text: s} }
func reasoning(s string) llm.Block { return llm.Block{Type: llm.BlockReasoning, Text: s} }

func delta(s string) session.Event {
	return ev(session.TypeAssistantChunk, session.AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Delta: s}})
}

func TestFold(t *testing.T) {
	stepEnd := ev(session.TypeStepEnd, session.StepEnd{})
	tests := []struct {
		name   string
		events []session.Event
		want   []llm.Block
	}{
		{
			name: "empty terminal message after an earlier text message",
			events: []session.Event{
				delta("partial one"), msg(text("partial one"), llm.Block{Type: llm.BlockToolCall, ID: "c", Name: "read"}), stepEnd,
				msg(), // tool-only step cut by max-tokens: usage-only record
			},
			want: []llm.Block{text("partial one"), {Type: llm.BlockToolCall, ID: "c", Name: "read"}},
		},
		{
			name:   "only streamed text (a cancelled child)",
			events: []session.Event{delta("hel"), delta("lo")},
			want:   []llm.Block{text("hello")},
		},
		{
			name:   "message order: the last non-empty message wins",
			events: []session.Event{msg(text("first")), stepEnd, msg(text("second")), stepEnd},
			want:   []llm.Block{text("second")},
		},
		{
			name:   "reasoning-only message beats later streamed text",
			events: []session.Event{msg(reasoning("thinking")), stepEnd, delta("streamed after")},
			want:   []llm.Block{reasoning("thinking")},
		},
		{
			name: "tool-result content is excluded",
			events: []session.Event{
				ev(session.TypeToolResult, session.ToolResult{CallID: "c", Content: "tool output"}),
				ev(session.TypeUserMessage, session.UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{text("user")}}}),
			},
			want: nil,
		},
		{
			name:   "nothing produced",
			events: []session.Event{msg(), stepEnd},
			want:   nil,
		},
		{
			name: "text of a retried attempt is discarded",
			events: []session.Event{
				delta("half sent"), ev(session.TypeLLMRetry, session.LLMRetry{}), delta("whole"),
			},
			want: []llm.Block{text("whole")},
		},
		{
			name:   "streamed text across steps accumulates",
			events: []session.Event{delta("a"), stepEnd, delta("b")},
			want:   []llm.Block{text("ab")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := FinalOutput(tc.events)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("output (-want +got):\n%s", d)
			}
			// The subagent/end field: absent, not [], when nothing was produced.
			raw, _ := json.Marshal(session.SubagentEnd{RunID: "r", StopReason: "completed", LastAssistantMessage: LastAssistantMessage(got)})
			var m map[string]any
			json.Unmarshal(raw, &m)
			if _, has := m["lastAssistantMessage"]; has != (tc.want != nil) {
				t.Errorf("lastAssistantMessage present = %v in %s", has, raw)
			}
		})
	}
}

func TestFoldPushText(t *testing.T) {
	var f Fold
	f.PushText("acp ")
	f.PushText("chunks")
	if d := cmp.Diff([]llm.Block{text("acp chunks")}, f.Collect()); d != "" {
		t.Error(d)
	}
	f.PushMessage(llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{}})
	if got := llm.BlocksText(f.Collect()); got != "acp chunks" {
		t.Errorf("empty message displaced streamed text: %q", got)
	}
}
