package session

import (
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

func usage(in, out int, cost float64) *llm.Usage {
	return &llm.Usage{InputTokens: in, OutputTokens: out, CostUSD: &cost}
}

// The one rule: a turn's turn/end usage (failed attempts included) over
// its steps', children once from subagent/end, durations from the turn's
// own events, the time between runs not counted.
func TestTally(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	timed := func(e Event, ms int) Event { e.Time = at(ms); return e }
	evs := []Event{
		timed(ev(t, 1, TypeTurnStart, TurnStart{Turn: 0}), 0),
		// The step's answer: the retried attempt's 7 input tokens are only in turn/end.
		timed(ev(t, 2, TypeAssistantMessage, AssistantMessage{Turn: 0, Usage: usage(10, 5, 0.5)}), 100),
		timed(ev(t, 3, TypeSubagentEnd, SubagentEnd{RunID: "r1", Usage: usage(100, 50, 2), DurationMs: 300}), 400),
		timed(ev(t, 4, TypeTurnEnd, TurnEnd{Turn: 0, Reason: ReasonCompleted, Usage: usage(17, 5, 0.75)}), 1500),
		// A resume an hour later: the hour is not counted.
		timed(ev(t, 5, TypeTurnStart, TurnStart{Turn: 1}), 3_600_000),
		timed(ev(t, 6, TypeContextCompacted, ContextCompacted{Turn: 1, Usage: usage(3, 1, 0.25)}), 3_600_050),
		timed(ev(t, 7, TypeAssistantMessage, AssistantMessage{Turn: 1, Usage: usage(4, 2, 0.25)}), 3_600_200),
	}
	var ta Tally
	for _, e := range evs {
		ta.Push(e)
	}
	// The open turn: its steps so far, its time up to the last event.
	if got := ta.Turn(1); !got.Open() || got.Own.InputTokens != 7 || got.DurationMs() != 200 {
		t.Fatalf("open turn: %+v (%d ms)", got, got.DurationMs())
	}
	// Crash repair closes it without usage: the steps count.
	ta.Push(timed(ev(t, 8, TypeTurnEnd, TurnEnd{Turn: 1, Reason: ReasonInterrupted}), 3_600_300))
	if n := len(ta.Turns); n != 2 {
		t.Fatalf("%d turns", n)
	}
	t0s := ta.Turn(0)
	if t0s.Own.InputTokens != 17 || t0s.Children.InputTokens != 100 || t0s.DurationMs() != 1500 {
		t.Fatalf("turn 0: %+v", t0s)
	}
	u := ta.Usage()
	if u.InputTokens != 17+100+7 || u.OutputTokens != 5+50+3 || u.CostUSD == nil || *u.CostUSD != 0.75+2+0.5 {
		t.Fatalf("usage %+v", u)
	}
	if own := ta.Own(); own.InputTokens != 24 {
		t.Fatalf("own %+v", own)
	}
	if ms := ta.DurationMs(); ms != 1500+300 {
		t.Fatalf("duration %d ms, want 1800", ms)
	}
	if ta.ChildRuns != 1 {
		t.Fatalf("%d child runs", ta.ChildRuns)
	}
	// Live events carry a monotonic reading; the same event loaded has none.
	live := Tally{}
	s := time.Now()
	live.Push(Event{Type: TypeTurnStart, Time: s, Data: []byte(`{"turn":0}`), Payload: TurnStart{}})
	live.Push(Event{Type: TypeTurnEnd, Time: s.Add(1500 * time.Millisecond), Data: []byte(`{"turn":0,"reason":"completed"}`), Payload: TurnEnd{Reason: ReasonCompleted}})
	if ms := live.DurationMs(); ms != 1500 {
		t.Fatalf("live %d ms", ms)
	}
}
