package session

import (
	"testing"

	"github.com/reinsdev/reins/internal/jsonw/jsonwtest"
)

// TestAppendJSON holds the hand-written encoders to json.Marshal, and
// marshalData to using them.
func TestAppendJSON(t *testing.T) {
	const n = 3000
	jsonwtest.Check(t, n, func(h Header) ([]byte, error) { return h.AppendJSON(nil) })
	jsonwtest.Check(t, n, func(d TurnStart) ([]byte, error) { return d.AppendJSON(nil) })
	jsonwtest.Check(t, n, func(d TurnEnd) ([]byte, error) { return d.AppendJSON(nil) })
	jsonwtest.Check(t, n, func(d StepStart) ([]byte, error) { return d.AppendJSON(nil) })
	jsonwtest.Check(t, n, func(d UserMessage) ([]byte, error) { return d.AppendJSON(nil) })
	jsonwtest.Check(t, n, func(d AssistantChunk) ([]byte, error) { return d.AppendJSON(nil) })
	jsonwtest.Check(t, n, func(d ToolCall) ([]byte, error) { return d.AppendJSON(nil) })
	jsonwtest.Check(t, n, func(d ToolResult) ([]byte, error) { return d.AppendJSON(nil) })
	jsonwtest.Check(t, n, func(d AssistantMessage) ([]byte, error) { return d.AppendJSON(nil) })
	// Through marshalData, as Append encodes: by hand for these types,
	// json.Marshal for the others.
	jsonwtest.Check(t, n, func(d AssistantChunk) ([]byte, error) { return marshalData(d) })
	jsonwtest.Check(t, n, func(d SubagentEnd) ([]byte, error) { return marshalData(d) })
	for _, v := range []any{TurnStart{}, TurnEnd{}, StepStart{}, UserMessage{}, AssistantChunk{}, ToolCall{}, ToolResult{}, AssistantMessage{}} {
		if _, ok := v.(appender); !ok {
			t.Errorf("%T does not write its own JSON", v)
		}
	}
}
