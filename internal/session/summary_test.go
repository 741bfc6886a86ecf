package session

import (
	"testing"

	"github.com/reinsdev/reins/internal/llm"
)

func TestSummaryMessage(t *testing.T) {
	user := func(s string) llm.Message {
		return llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: s}}}
	}
	said := func(s string) llm.Message {
		return llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: s}}}
	}
	m := SummaryMessage("s")
	if !IsSummary(m) || IsSummary(user("s")) || IsSummary(said(m.Content[0].Text)) {
		t.Fatalf("IsSummary does not recognize exactly SummaryMessage")
	}
	if got, ok := SummaryOf(m); !ok || got != "s" {
		t.Fatalf("SummaryOf = %q, %v", got, ok)
	}
}
