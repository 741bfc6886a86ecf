package session

import (
	"errors"
	"fmt"

	"github.com/reinsdev/reins/internal/llm"
)

// History derives the model history from events: user messages, assistant
// messages with content, and tool results, in log order, with every
// context/compacted event applied. Chunks are replay material and never
// history; an assistant message with empty content (a usage-only record of
// a step cut by max-tokens) is skipped because it carries nothing the
// model could be shown.
func History(events []Event) ([]llm.Message, error) {
	es, err := HistoryEntries(events)
	if err != nil {
		return nil, err
	}
	out := make([]llm.Message, len(es))
	for i, e := range es {
		out[i] = e.Message
	}
	return out, nil
}

// Entry is one history message and the position it holds in the log: the
// seq of the event that recorded it, or for a compaction's summary the
// first seq it replaces (a later compaction that replaces the summary
// names that seq).
type Entry struct {
	Seq     int64
	Message llm.Message
}

// HistoryEntries is History with each message's position. A
// context/compacted event replaces the entries whose position lies in its
// range, an earlier summary included, by its summary, in their place.
func HistoryEntries(events []Event) ([]Entry, error) {
	var out []Entry
	for _, e := range events {
		switch d := e.Payload.(type) {
		case UserMessage:
			out = append(out, Entry{e.Seq, d.Message})
		case AssistantMessage:
			if len(d.Message.Content) > 0 {
				out = append(out, Entry{e.Seq, d.Message})
			}
		case ToolResult:
			out = append(out, Entry{e.Seq, llm.Message{Role: llm.RoleTool, Content: []llm.Block{{
				Type: llm.BlockToolResult, CallID: d.CallID, Content: d.Content, IsError: d.IsError, Image: d.Image,
			}}}})
		case ContextCompacted:
			r := d.Replaces
			if r.FromSeq > r.ToSeq || r.ToSeq >= e.Seq {
				return nil, fmt.Errorf("session: event %d: context/compacted replaces %d..%d, not an earlier range", e.Seq, r.FromSeq, r.ToSeq)
			}
			if err := checkCompaction(out, r); err != nil {
				return nil, fmt.Errorf("session: event %d: context/compacted replaces %d..%d: %w", e.Seq, r.FromSeq, r.ToSeq, err)
			}
			out = ApplyCompaction(out, r, d.Summary)
		}
	}
	return out, nil
}

// ApplyCompaction replaces the entries of es whose position lies in r by
// one summary entry at r.FromSeq, in place of the first of them; es is
// ordered by position and stays so. It returns es unchanged when no entry
// lies in r (a range that replaces nothing has no place to put a summary).
func ApplyCompaction(es []Entry, r SeqRange, summary string) []Entry {
	i, j := span(es, r)
	if i == j {
		return es
	}
	out := make([]Entry, 0, len(es)-(j-i)+1)
	out = append(out, es[:i]...)
	out = append(out, Entry{r.FromSeq, SummaryMessage(summary)})
	return append(out, es[j:]...)
}

// span is the half-open index range [i, j) of the entries of es whose
// position lies in r.
func span(es []Entry, r SeqRange) (i, j int) {
	for i < len(es) && es[i].Seq < r.FromSeq {
		i++
	}
	j = i
	for j < len(es) && es[j].Seq <= r.ToSeq {
		j++
	}
	return i, j
}

// checkCompaction refuses a range compact.Choose never picks and a
// crafted or damaged log could hold: one that replaces the first prompt
// (the task itself would be gone), or one whose either end falls between
// a tool call and its results (a result without its call, or a call
// without its result: a provider answers such a history with HTTP 400).
func checkCompaction(es []Entry, r SeqRange) error {
	i, j := span(es, r)
	if i == j {
		return nil
	}
	first := -1
	for k, e := range es {
		if e.Message.Role == llm.RoleUser {
			first = k
			break
		}
	}
	if first < 0 || i <= first {
		return errReplacesFirstPrompt
	}
	msgs := make([]llm.Message, len(es))
	for k, e := range es {
		msgs[k] = e.Message
	}
	if !Boundary(msgs, i) || j < len(msgs) && !Boundary(msgs, j) {
		return errSplitsToolCall
	}
	return nil
}

var (
	errReplacesFirstPrompt = errors.New("it would replace the first prompt")
	errSplitsToolCall      = errors.New("it would separate a tool call from its result")
)

// DanglingCalls returns the ids of tool calls in history that have no result,
// in order: what a crash between a tool call and its result leaves behind.
// A provider rejects such a history, so a resumed run answers them first.
func DanglingCalls(history []llm.Message) []llm.Block {
	answered := map[string]bool{}
	for _, m := range history {
		for _, b := range m.Content {
			if b.Type == llm.BlockToolResult {
				answered[b.CallID] = true
			}
		}
	}
	var out []llm.Block
	for _, m := range history {
		if m.Role != llm.RoleAssistant {
			continue
		}
		for _, b := range m.Content {
			if b.Type == llm.BlockToolCall && !answered[b.ID] {
				out = append(out, b)
			}
		}
	}
	return out
}
