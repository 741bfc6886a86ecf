package session

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

// pictureEvents makes events of (type, data) pairs, a second apart from
// base.
func pictureEvents(t *testing.T, base time.Time, pairs ...any) []Event {
	t.Helper()
	var out []Event
	for i := 0; i < len(pairs); i += 2 {
		e, err := MakeEvent(pairs[i].(string), int64(i/2), base.Add(time.Duration(i/2+1)*time.Second), pairs[i+1])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func TestPictureOf(t *testing.T) {
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	h := Header{ID: "p", CreatedAt: base}
	evs := pictureEvents(t, base,
		TypeToolResult, ToolResult{CallID: "c1", Content: "before its call"}, // 0: no tool yet
		TypeTurnStart, TurnStart{Turn: 0}, // 1
		TypeToolCall, ToolCall{CallID: "c1", Name: "read"}, // 2
		TypeToolCall, ToolCall{CallID: "c1", Name: "grep"}, // 3: the same id again: the latest names it
		TypeToolResult, ToolResult{CallID: "c1"}, // 4
		TypeSubagentStart, SubagentStart{RunID: "r1", ChildSession: "c"}, // 5
		TypeSubagentEnd, SubagentEnd{RunID: "r1", StopReason: "completed", Usage: &llm.Usage{InputTokens: 5}}, // 6
		TypeSubagentEnd, SubagentEnd{RunID: "nope", StopReason: "completed"}, // 7: not started here
		TypeJobNotice, JobNotice{JobID: "j1", Status: "done"}, // 8: still r1's
		TypeJobNotice, JobNotice{JobID: "j2", Status: "done"}, // 9: follows no subagent/end
		TypeSubagentStart, SubagentStart{RunID: "r2", Continues: "p.r1"}, // 10
		TypeSubagentStart, SubagentStart{RunID: "r3", Continues: "p.r1"}, // 11
		TypeTurnEnd, TurnEnd{Turn: 0, Reason: ReasonAborted, By: AbortedByUser}, // 12
		"x/future", map[string]any{"a": 1}, // 13
		TypeTurnStart, TurnStart{Turn: 1}, // 14
	)
	p := PictureOf(h, evs)
	if got := len(p.Entries); got != len(evs) {
		t.Fatalf("%d entries of %d events", got, len(evs))
	}
	wantTurn := []int{-1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}
	for i, e := range p.Entries {
		if e.Turn != wantTurn[i] {
			t.Errorf("entry %d (%s): turn %d, want %d", i, e.Type, e.Turn, wantTurn[i])
		}
	}
	for i, want := range map[int]string{0: "", 4: "grep"} {
		if got := p.Entries[i].Tool; got != want {
			t.Errorf("entry %d: tool %q, want %q", i, got, want)
		}
	}
	if len(p.Runs) != 3 {
		t.Fatalf("%d runs, want 3", len(p.Runs))
	}
	r1 := p.Runs[0]
	for _, i := range []int{5, 6, 8} {
		if p.Entries[i].Run != r1 {
			t.Errorf("entry %d (%s) is not r1's", i, p.Entries[i].Type)
		}
	}
	for _, i := range []int{7, 9, 13} {
		if p.Entries[i].Run != nil {
			t.Errorf("entry %d (%s) has a run", i, p.Entries[i].Type)
		}
	}
	if r1.End == nil || r1.End.StopReason != "completed" || !r1.EndTime.Equal(evs[6].Time) || r1.Job == nil || r1.Job.JobID != "j1" {
		t.Errorf("r1 = %+v", r1)
	}
	if p.Continued["p.r1"] != 2 {
		t.Errorf("continued = %v", p.Continued)
	}
	if p.Turns != 2 || !p.Open || p.LastEnd.EndText() != "aborted by user" || !p.LastTime.Equal(evs[14].Time) {
		t.Errorf("turns %d open %v last end %q last time %v", p.Turns, p.Open, p.LastEnd.EndText(), p.LastTime)
	}
	if u := p.Tally.Turn(0).Children; u.InputTokens != 5 {
		t.Errorf("turn 0's children used %+v, want the tally's fold", u)
	}
}

// TestPictureEmpty: a header alone; its time is the last.
func TestPictureEmpty(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := PictureOf(Header{CreatedAt: at}, nil)
	if p.Turns != 0 || p.Open || len(p.Entries) != 0 || !p.LastTime.Equal(at) {
		t.Errorf("%+v", p)
	}
}

// TestPictureReplay: the stored logs' pictures agree with the tally and
// with ChildID's continuations.
func TestPictureReplay(t *testing.T) {
	ld, err := Load(filepath.Join(ReplayRoot, replayParent, FileName))
	if err != nil {
		t.Fatal(err)
	}
	p := PictureOf(ld.Header, ld.Events)
	if p.Turns != len(p.Tally.Turns) || p.Turns != 2 || p.Open {
		t.Errorf("turns %d, tally %d, open %v", p.Turns, len(p.Tally.Turns), p.Open)
	}
	if len(p.Runs) != 2 || p.Continued[replayChild] != 1 || p.Runs[0].Job == nil {
		t.Errorf("runs %d continued %v job %v", len(p.Runs), p.Continued, p.Runs[0].Job)
	}
}

func TestEndTexts(t *testing.T) {
	usage := func(u llm.Usage) string { return u.TokensText() }
	for _, c := range []struct {
		got, want string
	}{
		{TurnEnd{Reason: ReasonCompleted}.EndText(), "completed"},
		{TurnEnd{Reason: ReasonAborted, By: AbortedByUser}.EndText(), "aborted by user"},
		{SubagentEnd{StopReason: "completed"}.EndText(usage), "completed"},
		{SubagentEnd{StopReason: "failed", DurationMs: 1500, Usage: &llm.Usage{InputTokens: 1}, Diagnostic: "d"}.EndText(usage),
			"failed after 1.5s  " + usage(llm.Usage{InputTokens: 1}) + "  d"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
