package session

import (
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

// Picture is one session's events folded into what its renderers draw:
// `reins log` (internal/logview) and the view page (internal/view) both
// walk Entries and read the turn, the child run and the tool each event
// belongs to from here, so the two cannot come to disagree about which
// turn a usage belongs to, which child a subagent/end or job/notice
// settles, or which tool a result answers. Usage and durations are the
// Tally's (the one rule of docs/events.md#usage-and-duration).
//
// A Picture reads typed payloads only; an event of a type this reins does
// not know is an Entry with nothing else set.
type Picture struct {
	Header  Header
	Entries []Placed
	Tally   Tally
	// Turns counts turn/start events; Open says the last one has no
	// turn/end yet; LastEnd is the last turn/end.
	Turns   int
	Open    bool
	LastEnd TurnEnd
	// LastTime is the latest time of the header and the events.
	LastTime time.Time
	// Runs are the child runs, one per subagent/start, in log order.
	Runs []*Run
	// Continued counts the continuations of each child, by the id the
	// model knows it as (ChildID of its first run).
	Continued map[string]int
}

// Placed is one event with where it stands in its session.
type Placed struct {
	Event
	// Turn is the Tally's index of the turn the event is in (the last
	// turn/start's), -1 before the first.
	Turn int
	// Run is the child run a subagent/start began, a subagent/end
	// settled or a job/notice reported on; nil otherwise.
	Run *Run
	// Tool is the name of the tool a tool/result answers, as its
	// tool/call (the latest before it with its call id) said; "" when
	// none came before it.
	Tool string
}

// Run is one child run: its subagent/start and, once it settled, its
// subagent/end and the job/notice that followed it.
type Run struct {
	Start     SubagentStart
	StartTime time.Time
	End       *SubagentEnd
	EndTime   time.Time
	Job       *JobNotice
}

// PictureOf folds one session's events (in log order).
func PictureOf(h Header, events []Event) *Picture {
	p := &Picture{Header: h, LastTime: h.CreatedAt, Entries: make([]Placed, 0, len(events)), Continued: map[string]int{}}
	var (
		turn    = -1
		runs    = map[string]*Run{}   // by run id: the latest subagent/start's
		tools   = map[string]string{} // tool name by call id
		lastEnd *Run                  // the run whose subagent/end came last: a job/notice follows it
	)
	for _, e := range events {
		p.Tally.Push(e)
		if e.Time.After(p.LastTime) {
			p.LastTime = e.Time
		}
		en := Placed{Event: e}
		ended := false
		switch d := e.Payload.(type) {
		case TurnStart:
			turn++
			p.Turns++
			p.Open = true
		case TurnEnd:
			p.Open, p.LastEnd = false, d
		case ToolCall:
			tools[d.CallID] = d.Name
		case ToolResult:
			en.Tool = tools[d.CallID]
		case SubagentStart:
			r := &Run{Start: d, StartTime: e.Time}
			p.Runs = append(p.Runs, r)
			runs[d.RunID] = r
			en.Run = r
			if d.Continues != "" {
				p.Continued[d.Continues]++
			}
		case SubagentEnd:
			// One for a run not started here leaves the job/notice's
			// run as it was.
			ended = true
			if r := runs[d.RunID]; r != nil {
				r.End, r.EndTime = &d, e.Time
				en.Run, lastEnd = r, r
			}
		case JobNotice:
			if lastEnd != nil {
				lastEnd.Job = &d
				en.Run = lastEnd
			}
		}
		if !ended {
			lastEnd = nil
		}
		en.Turn = turn
		p.Entries = append(p.Entries, en)
	}
	return p
}

// EndText is how a turn ended, as both renderers say it: its reason and,
// for an abort, by whom.
func (d TurnEnd) EndText() string {
	if d.By == "" {
		return string(d.Reason)
	}
	return string(d.Reason) + " by " + d.By
}

// EndText is how a child run ended, as both renderers say it: its stop
// reason, how long it ran, its usage (as usage says it) and its
// diagnostic.
func (d SubagentEnd) EndText(usage func(llm.Usage) string) string {
	s := d.StopReason
	if d.DurationMs > 0 {
		s += " after " + (time.Duration(d.DurationMs) * time.Millisecond).String()
	}
	if d.Usage != nil {
		s += "  " + usage(*d.Usage)
	}
	if d.Diagnostic != "" {
		s += "  " + d.Diagnostic
	}
	return s
}
