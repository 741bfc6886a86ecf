package outcome

import (
	"slices"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

// Fold is the one output-selection rule of docs/subagents.md, as an incremental fold.
// Every consumer of a run's output — Result.Output, subagent/end
// .lastAssistantMessage, the subagent tool result, job output, the SDK's
// subagent/finished and `reins run` itself — goes through it, so observers
// of one run can never disagree about what it answered.
//
// The rule: the last assistant message with non-empty content wins;
// without one, the text streamed so far (text-delta chunks, or raw ACP/pi
// text) is the output. Content length decides, not text: a reasoning-only
// message is non-empty and beats text streamed after it. Empty-content
// messages (the usage-only record of a step cut by max-tokens) are ignored.
// Tool-result content never counts.
//
// Streamed text of a model attempt that failed and was retried is
// discarded at its llm/retry: it was never an answer.
//
// A message cut by a cancel (assistant/message with interrupted set, a pi
// message that stopped "aborted") is not a complete message: its text
// counts as streamed text only. So a child cancelled while streaming a
// later step reports its earlier complete message, and the stop reason
// (aborted) records the cut (seed 000); a child cancelled in its first
// step still reports what it streamed.
type Fold struct {
	last      []llm.Block // content of the last non-empty assistant message
	committed []byte      // streamed text of finished attempts
	attempt   []byte      // streamed text of the attempt in progress
}

// Push folds one session event, by its payload (session.Event.Payload):
// a live event's is the writer's value, a read one's its decoded data, and
// both say the same, so the fold of a live run and of its log agree.
func (f *Fold) Push(e session.Event) {
	switch d := e.Payload.(type) {
	case session.AssistantMessage:
		if d.Interrupted {
			f.PushPartial(d.Message)
			return
		}
		// Copied: a live payload is the writer's, which keeps the message.
		d.Message.Content = slices.Clone(d.Message.Content)
		f.PushMessage(d.Message)
	case session.AssistantChunk:
		if d.Chunk.Type == llm.ChunkTextDelta {
			f.attempt = append(f.attempt, d.Chunk.Delta...)
		}
	case session.LLMRetry:
		f.attempt = f.attempt[:0]
	case session.StepEnd, session.TurnEnd:
		f.commit()
	}
}

// PushMessage folds one assistant message.
func (f *Fold) PushMessage(m llm.Message) {
	f.commit()
	if len(m.Content) > 0 {
		f.last = m.Content
	}
}

// PushPartial folds the message of a step cut by a cancel: its text
// stands for the attempt's streamed text (which it repeats, so the deltas
// already folded are replaced, not doubled) and never beats an earlier
// complete message.
func (f *Fold) PushPartial(m llm.Message) {
	f.attempt = append(f.attempt[:0], llm.BlocksText(m.Content)...)
	f.commit()
}

// PushText folds raw streamed text (ACP and pi children expose no
// assistant messages, only text chunks).
func (f *Fold) PushText(s string) { f.attempt = append(f.attempt, s...) }

func (f *Fold) commit() {
	f.committed = append(f.committed, f.attempt...)
	f.attempt = f.attempt[:0]
}

// Collect returns the selected output: nil when the run produced nothing.
func (f *Fold) Collect() []llm.Block {
	if len(f.last) > 0 {
		return append([]llm.Block(nil), f.last...)
	}
	text := string(f.committed) + string(f.attempt)
	if text == "" {
		return nil
	}
	return []llm.Block{{Type: llm.BlockText, Text: text}}
}

// FinalOutput applies the rule to a whole event suffix.
func FinalOutput(events []session.Event) []llm.Block {
	var f Fold
	for _, e := range events {
		f.Push(e)
	}
	return f.Collect()
}

// LastAssistantMessage is the subagent/end field for an output: absent (nil)
// when the run produced nothing, never an empty message.
func LastAssistantMessage(output []llm.Block) *llm.Message {
	if len(output) == 0 {
		return nil
	}
	return &llm.Message{Role: llm.RoleAssistant, Content: output}
}
