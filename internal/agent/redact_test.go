package agent

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/sandbox"
)

// TestToolResultRedacted: a known secret value in a tool result is
// replaced by [redacted] before it is logged (session.jsonl) or sent to the
// model (SPEC §12, sandbox.env).
func TestToolResultRedacted(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	m := &script{replies: []func(context.Context, func(llm.Chunk) bool){
		chunks(callReply(llm.FinishToolCalls, llm.Block{ID: "c1", Name: "echo", Arguments: `{"say":"DEEPSEEK_API_KEY=` + key + `"}`})...),
		chunks(textReply("done")...),
	}}
	a := newAgent(t, m, echoTool{name: "echo"})
	a.Redact = sandbox.NewRedactor([]string{key}).Redact
	a.RunTurn(context.Background(), "hi")
	if got := m.requests[1].Messages[2].Content[0].Content; got != "DEEPSEEK_API_KEY="+sandbox.Redacted {
		t.Errorf("sent to the model: %q", got)
	}
	a.Log.Flush()
	b, err := os.ReadFile(a.Log.Path())
	if err != nil {
		t.Fatal(err)
	}
	// The model's own call still shows it (it wrote it); the result must not.
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, `"tool/result"`) && strings.Contains(line, key) {
			t.Errorf("the session log has the key in a tool result: %s", line)
		}
	}
}
