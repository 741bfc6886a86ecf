package outcome

import (
	"bytes"
	"slices"
	"unicode/utf8"

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

// Push folds one session event.
func (f *Fold) Push(e session.Event) {
	switch e.Type {
	case session.TypeAssistantMessage:
		// The live event's value when it says what the data says (its
		// texts valid UTF-8), so the fold of a live run and of its log
		// agree; copied, as the writer keeps the message.
		d, ok := e.Value.(session.AssistantMessage)
		if ok && validText(d.Message) {
			d.Message.Content = slices.Clone(d.Message.Content)
		} else if d = (session.AssistantMessage{}); e.Decode(&d) != nil {
			return
		}
		if d.Interrupted {
			f.PushPartial(d.Message)
			return
		}
		f.PushMessage(d.Message)
	case session.TypeAssistantChunk:
		// A live event's value says what its data says when its delta is
		// valid UTF-8: no decoding.
		if d, ok := e.Value.(session.AssistantChunk); ok && utf8.ValidString(d.Chunk.Delta) {
			if d.Chunk.Type == llm.ChunkTextDelta {
				f.attempt = append(f.attempt, d.Chunk.Delta...)
			}
			return
		}
		// Only text deltas count, and encoding/json decides what the data
		// says (any whitespace, key order, key case or escapes the
		// protocol allows). The fast path is exactly equivalent: a JSON
		// string without a backslash is its bytes, so a type that decodes
		// to "text-delta" leaves those bytes in the data unless something
		// is escaped. Most chunks (reasoning, tool-call arguments, block
		// starts and ends) have neither and skip the decode.
		if !bytes.Contains(e.Data, textDelta) && bytes.IndexByte(e.Data, '\\') < 0 {
			return
		}
		var d struct {
			Chunk struct {
				Type  llm.ChunkType `json:"type"`
				Delta string        `json:"delta"`
			} `json:"chunk"`
		}
		if e.Decode(&d) != nil {
			return
		}
		if d.Chunk.Type == llm.ChunkTextDelta {
			f.attempt = append(f.attempt, d.Chunk.Delta...)
		}
	case session.TypeLLMRetry:
		f.attempt = f.attempt[:0]
	case session.TypeStepEnd, session.TypeTurnEnd:
		f.commit()
	}
}

var textDelta = []byte(llm.ChunkTextDelta)

// validText reports whether every string of m's blocks the fold may keep
// is valid UTF-8, so that encoding and decoding it gives it back.
func validText(m llm.Message) bool {
	for _, b := range m.Content {
		for _, s := range [...]string{b.Text, b.Signature, b.ID, b.Name, b.Arguments, b.CallID, b.Content, string(b.Type)} {
			if !utf8.ValidString(s) {
				return false
			}
		}
		if b.Image != nil && !utf8.ValidString(b.Image.MediaType) {
			return false
		}
	}
	return true
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
