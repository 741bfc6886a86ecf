package logview

import (
	"bytes"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/session"
)

// TestLogPrintsTraceID: `reins log SESSION` names the OpenTelemetry trace
// of a traced turn (issue 33), and prints nothing of the kind for an
// untraced one.
func TestLogPrintsTraceID(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	ld := &session.Loaded{Header: session.Header{ID: "s1"}, Events: []session.Event{
		{Type: session.TypeTurnStart, Seq: 0, Data: []byte(`{"turn":1,"traceId":"` + id + `"}`), Payload: session.TurnStart{Turn: 1, TraceID: id}},
		{Type: session.TypeTurnEnd, Seq: 1, Data: []byte(`{"turn":1,"reason":"completed"}`), Payload: session.TurnEnd{Turn: 1, Reason: session.ReasonCompleted}},
		{Type: session.TypeTurnStart, Seq: 2, Data: []byte(`{"turn":2}`), Payload: session.TurnStart{Turn: 2}},
	}}
	var b bytes.Buffer
	(&renderer{w: &b, root: t.TempDir()}).session(ld, 0)
	out := b.String()
	if !strings.Contains(out, "turn 1  trace "+id+"\n") {
		t.Errorf("no trace id on turn 1:\n%s", out)
	}
	if !strings.Contains(out, "turn 2\n") {
		t.Errorf("untraced turn 2 is not plain:\n%s", out)
	}
}
