package progress

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/session"
)

func ev(t *testing.T, typ string, data any) session.Event {
	t.Helper()
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	e, err := session.NewEvent(typ, 0, time.Time{}, raw)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A turn that ends while background jobs run says that reins waits for
// them (issue 15); a terminal only, as all progress.
func TestProgressWaitingLine(t *testing.T) {
	var buf bytes.Buffer
	p := &Progress{w: &buf, on: true}
	p.Event(ev(t, session.TypeSubagentStart, session.SubagentStart{RunID: "run-1", Label: "bg", Agent: "general", Background: true}))
	p.Event(ev(t, session.TypeSubagentStart, session.SubagentStart{RunID: "run-2", Label: "fg", Agent: "general"}))
	p.Event(ev(t, session.TypeSubagentEnd, session.SubagentEnd{RunID: "run-2", StopReason: "completed"}))
	p.Event(ev(t, session.TypeTurnEnd, session.TurnEnd{Reason: "completed"}))
	if !strings.Contains(buf.String(), "waiting for 1 background job(s) to finish") {
		t.Fatalf("no waiting line:\n%s", buf.String())
	}
	buf.Reset()
	p.Event(ev(t, session.TypeSubagentEnd, session.SubagentEnd{RunID: "run-1", StopReason: "completed"}))
	p.Event(ev(t, session.TypeTurnEnd, session.TurnEnd{Reason: "completed"}))
	if strings.Contains(buf.String(), "waiting") {
		t.Fatalf("waiting line with no job running:\n%s", buf.String())
	}

	var off bytes.Buffer
	q := New(&off, false, true, nil) // not a terminal
	q.Event(ev(t, session.TypeSubagentStart, session.SubagentStart{RunID: "run-1", Background: true}))
	q.Event(ev(t, session.TypeTurnEnd, session.TurnEnd{Reason: "completed"}))
	if off.Len() != 0 {
		t.Fatalf("progress on a non-terminal: %q", off.String())
	}
}

// A compaction shows on the terminal, without the model's summary.
func TestProgressCompacted(t *testing.T) {
	var buf bytes.Buffer
	p := &Progress{w: &buf, on: true}
	p.Event(ev(t, session.TypeContextCompacted, session.ContextCompacted{Summary: "MODEL-TEXT\x1b[31m", Reason: session.CompactOverflow}))
	if got := buf.String(); !strings.Contains(got, "context compacted (overflow)") || strings.Contains(got, "MODEL-TEXT") {
		t.Fatalf("progress %q", got)
	}
}
