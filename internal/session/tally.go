package session

import (
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

// Tally is the one rule for what a session used and how long it ran
// (docs/events.md#usage-and-duration): `reins log`, `reins view`, the
// terminal's /cost and `reins run --json` all fold a session's events with
// it, so the four say the same tokens, cost and durations.
//
//   - A turn's usage is its turn/end usage: every model request the turn
//     made, failed attempts that reported usage and summary requests
//     included. A turn without one (still open, or closed by crash repair)
//     counts the usage its steps recorded (assistant/message and
//     context/compacted).
//   - A child's usage is its subagent/end usage, which counts the child's
//     own children. It is added to the turn it settled in, once; the
//     child's own session is not read again.
//   - A turn's duration is its turn/end time minus its turn/start time, in
//     whole milliseconds; an open turn's runs to the last event seen. The
//     session's duration is the sum of its turns': the time between runs
//     (a resume a day later) is not counted, and children are not added,
//     since they ran within their parent's time.
//
// The zero Tally is empty; Push the events in log order.
type Tally struct {
	Turns []TurnTally
	// Outside is the usage of subagent/end events outside any turn (logs
	// of reins versions that wrote them there).
	Outside llm.Usage
	// ChildRuns counts subagent/end events.
	ChildRuns int
	steps     llm.Usage // the open turn's recorded step usage
	last      time.Time // the last event's time
}

// TurnTally is one turn of a Tally.
type TurnTally struct {
	Turn  int
	Start time.Time
	End   time.Time // the turn/end's time; the last event's while open
	// Closed: the turn has its turn/end (or the next turn/start).
	Closed bool
	// Own is what the turn's requests used; Children what the children
	// that settled in it used.
	Own, Children llm.Usage
	Reason        EndReason // the turn/end reason; empty while open
}

// Open reports whether the turn has no turn/end yet.
func (t TurnTally) Open() bool { return !t.Closed }

// Usage is the turn's usage, its children's included.
func (t TurnTally) Usage() llm.Usage { return t.Own.Add(t.Children) }

// DurationMs is the turn's wall time in milliseconds.
func (t TurnTally) DurationMs() int64 {
	if t.End.Before(t.Start) {
		return 0
	}
	return t.End.Sub(t.Start).Milliseconds()
}

// TallyOf folds events (one session's, in log order).
func TallyOf(events []Event) Tally {
	var t Tally
	for _, e := range events {
		t.Push(e)
	}
	return t
}

// Push folds one event.
func (t *Tally) Push(e Event) {
	// Wall clock only: an event observed live carries a monotonic reading
	// that one loaded from the log has not, and both must give the same
	// duration.
	at := e.Time.Round(0)
	if at.After(t.last) {
		t.last = at
	}
	cur := t.open()
	switch d := e.Payload.(type) {
	case TurnStart:
		if cur != nil { // a turn/start without turn/end: closed where the next begins
			cur.End, cur.Own, cur.Closed = at, cur.Own.Add(t.steps), true
		}
		t.Turns = append(t.Turns, TurnTally{Turn: d.Turn, Start: at})
		t.steps = llm.Usage{}
	case AssistantMessage:
		if cur != nil && d.Usage != nil {
			t.steps = t.steps.Add(*d.Usage)
		}
	case ContextCompacted:
		if cur != nil && d.Usage != nil {
			t.steps = t.steps.Add(*d.Usage)
		}
	case TurnEnd:
		if cur == nil {
			return
		}
		cur.End, cur.Reason, cur.Closed = at, d.Reason, true
		if d.Usage != nil {
			cur.Own = *d.Usage
		} else {
			cur.Own = t.steps
		}
		t.steps = llm.Usage{}
	case SubagentEnd:
		t.ChildRuns++
		if d.Usage == nil {
			return
		}
		if cur != nil {
			cur.Children = cur.Children.Add(*d.Usage)
		} else {
			t.Outside = t.Outside.Add(*d.Usage)
		}
	}
}

// open is the turn that has no turn/end yet, or nil.
func (t *Tally) open() *TurnTally {
	if n := len(t.Turns); n > 0 && t.Turns[n-1].Open() {
		return &t.Turns[n-1]
	}
	return nil
}

// Turn is the i-th turn as it stands: an open one with the usage its
// steps recorded so far and its time up to the last event.
func (t *Tally) Turn(i int) TurnTally {
	tt := t.Turns[i]
	if tt.Open() {
		tt.Own = tt.Own.Add(t.steps)
		tt.End = t.last
		if tt.End.Before(tt.Start) {
			tt.End = tt.Start
		}
	}
	return tt
}

// Usage is the session's usage: every turn's and every child's, in log
// order.
func (t *Tally) Usage() llm.Usage {
	var u llm.Usage
	for i := range t.Turns {
		u = u.Add(t.Turn(i).Usage())
	}
	return u.Add(t.Outside)
}

// Own is the usage of the session's own requests, children not included.
func (t *Tally) Own() llm.Usage {
	var u llm.Usage
	for i := range t.Turns {
		u = u.Add(t.Turn(i).Own)
	}
	return u
}

// DurationMs is the sum of the turns' durations.
func (t *Tally) DurationMs() int64 {
	var ms int64
	for i := range t.Turns {
		ms += t.Turn(i).DurationMs()
	}
	return ms
}
