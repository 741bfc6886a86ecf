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

// A hook's text to the user (systemMessage, a blocked prompt's reason)
// is on stderr whether or not it is a terminal, as Claude Code shows
// systemMessage; escaped, bounded; a hook that said nothing to the user
// prints nothing.
func TestProgressHookToUser(t *testing.T) {
	for _, on := range []bool{false, true} {
		var buf bytes.Buffer
		p := New(&buf, on, false, nil)
		p.Event(ev(t, session.TypeHookRun, session.HookRun{Event: "PreToolUse", Tool: "Bash", Command: "x", Exit: 0}))
		if buf.Len() != 0 {
			t.Fatalf("on=%v: a hook with nothing for the user printed %q", on, buf.String())
		}
		long := strings.Repeat("line\n", 50)
		p.Event(ev(t, session.TypeHookRun, session.HookRun{Event: "UserPromptSubmit", Command: "guard", Exit: 2, Decision: "block",
			ToUser: "no secrets\x1b]0;pwned\x07 in prompts\x1b[31m\nsecond line\n" + long}))
		got := buf.String()
		if strings.ContainsAny(got, "\x1b\x07") {
			t.Errorf("on=%v: raw control characters reached stderr: %q", on, got)
		}
		if !strings.Contains(got, "reins: hook UserPromptSubmit: no secrets") || !strings.Contains(got, "  second line\n") || !strings.Contains(got, "… 32 more lines") {
			t.Errorf("on=%v: stderr %q", on, got)
		}
		if n := strings.Count(got, "\n"); n != maxHookLines+1 {
			t.Errorf("on=%v: %d lines, want %d and the count of the rest", on, n, maxHookLines+1)
		}
	}
}
