package wrap

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzNormalizeEvent feeds arbitrary `pi --mode json` stdout lines and stop
// reasons: no panic; the canonical stop reason is in the closed set, raw is
// the trimmed input, and only stop, length, aborted and error are terminal;
// an event that is recorded marshals to a JSON object of its own type.
func FuzzNormalizeEvent(f *testing.F) {
	// Seeds: lines of a real `pi --mode json` run.
	for _, s := range []string{
		`{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp"}`,
		`{"type":"agent_start"}`,
		`{"type":"message_update","message":{"role":"assistant","content":[]},"assistantMessageEvent":{"type":"text_delta","delta":"Hel"}}`,
		`{"type":"tool_execution_start","toolCallId":"c1","toolName":"read","args":{"path":"src/app.ts","offset":1,"limit":20}}`,
		`{"type":"tool_execution_end","toolCallId":"c1","toolName":"bash","result":{"content":[]},"isError":true}`,
		`{"type":"message_end","message":{"role":"assistant","model":"anthropic/claude-sonnet-4-5","stopReason":"end_turn","content":[{"type":"text","text":"Final answer"}],"usage":{"input":10,"output":5}}}`,
		`{"type":"message_end","message":{"role":"assistant","model":"m","stopReason":"toolUse","content":[{"type":"thinking","thinking":"hmm"},{"type":"toolCall","id":"t1","name":"ls","arguments":{}}]}}`,
		`{"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"429 rate limited","content":"plain"}}`,
		`{"type":"message_end","message":{"role":"assistant","stopReason":7,"content":null}}`,
		`{"type":"auto_retry_start","attempt":1}`,
		`{"type":"agent_end","willRetry":true}`,
		"not json", "  {\"type\":\"tool_execution_end\"}  \n", "",
	} {
		f.Add([]byte(s), " Max_Tokens\n")
	}
	f.Add([]byte(`{}`), "toolUse")
	f.Add([]byte(`[]`), "\u212aaborted")
	f.Fuzz(func(t *testing.T, line []byte, stop string) {
		checkStop := func(value, canonical, raw string) {
			t.Helper()
			switch canonical {
			case "", StopStop, StopLength, StopToolUse, StopAborted, StopError:
			default:
				t.Fatalf("canonical stop reason %q of %q outside the closed set", canonical, value)
			}
			if raw != strings.TrimSpace(value) {
				t.Fatalf("raw %q is not the trimmed input %q", raw, value)
			}
			want := canonical == StopStop || canonical == StopLength || canonical == StopAborted || canonical == StopError
			if IsTerminal(canonical) != want {
				t.Fatalf("IsTerminal(%q) = %v", canonical, !want)
			}
		}
		c, raw := NormalizeStopReason(stop)
		checkStop(stop, c, raw)

		ev, ok, err := NormalizeEvent(line)
		if err != nil {
			if !errors.Is(err, ErrNotJSON) || ok {
				t.Fatalf("NormalizeEvent: ok %v, err %v", ok, err)
			}
			return
		}
		if !ok {
			if ev.Type != "" {
				t.Fatalf("an unrecorded line made an event %+v", ev)
			}
			return
		}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("marshal %+v: %v", ev, err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil || m["type"] != ev.Type {
			t.Fatalf("event marshals to %s", b)
		}
		switch ev.Type {
		case EventToolCall, EventToolResult:
		case EventAssistantText:
			// The event's raw stop reason is the message's, trimmed.
			var msg struct {
				Message struct {
					StopReason any `json:"stopReason"`
				} `json:"message"`
			}
			_ = json.Unmarshal(line, &msg)
			s, _ := msg.Message.StopReason.(string)
			checkStop(s, ev.StopReason, ev.RawStopReason)
			if ev.Text != strings.TrimSpace(ev.Text) {
				t.Fatalf("text %q is not trimmed", ev.Text)
			}
		default:
			t.Fatalf("event of unknown type %q", ev.Type)
		}
	})
}
