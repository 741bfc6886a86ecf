package session

import (
	"strings"

	"github.com/reinsdev/reins/internal/llm"
)

// The summary boundary and message live with the log, whose history
// (HistoryEntries) applies a context/compacted event with them;
// compaction (internal/compact) imports them to choose its range and
// write its summary, so the log knows no compaction policy.

// Boundary reports whether the history may be cut before message i: it is
// not a tool result, so every call before it has its result before it.
func Boundary(history []llm.Message, i int) bool {
	if history[i].Role == llm.RoleTool {
		return false
	}
	for _, b := range history[i].Content {
		if b.Type == llm.BlockToolResult {
			return false
		}
	}
	return true
}

// summaryHeader opens the user message that stands for the replaced part
// of the conversation; IsSummary recognizes it.
const summaryHeader = "[Summary of the earlier part of this conversation, written when the context was compacted. The messages it replaces are in the session log.]\n\n"

// SummaryMessage is the history message that stands for a replaced range.
func SummaryMessage(summary string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: summaryHeader + summary}}}
}

// IsSummary reports whether m is a SummaryMessage.
func IsSummary(m llm.Message) bool {
	_, ok := SummaryOf(m)
	return ok
}

// SummaryOf is the summary a SummaryMessage carries, without its header.
func SummaryOf(m llm.Message) (summary string, ok bool) {
	if m.Role != llm.RoleUser || len(m.Content) != 1 {
		return "", false
	}
	return strings.CutPrefix(m.Content[0].Text, summaryHeader)
}
