package subagent

import (
	"fmt"
	"time"
)

// maxStallNotes bounds the undelivered stall notices: each stalled job
// settles (and gets its own notice) right after, so a parent that does
// not drain loses nothing it would need.
const maxStallNotes = 64

// stallResult settles a run its provider stopped because the child stalled
// (Staller): aborted, category stalled, its partial output kept. A budget
// that ran out is the better explanation and wins; a completed run keeps
// its answer.
func stallResult(req Request, run Run, r Result) Result {
	s, ok := run.(Staller)
	if !ok || !s.Stalled() || r.StopReason == StopCompleted || req.Budget.Err() != nil {
		return r
	}
	p := providerOf(req)
	r.StopReason = StopAborted
	r.Diagnostic = Diagnostic{Provider: p, Stage: budgetStage[p], Category: CategoryStalled, StopReason: StopAborted}.String()
	return r
}

// StallNotice is the message a parent gets when a background job's child
// stalled, before the job is stopped and settles.
func StallNotice(id, description string, after time.Duration) string {
	return fmt.Sprintf("background job %s (subagent: %s) is stalled: its child sent nothing for %s; stopping it.", id, description, after)
}

// stallNotice returns the OnStall of background job id: it queues the
// notice for the parent's next Drain and wakes a parent that is idle.
func (m *Manager) stallNotice(id, description string, after time.Duration) func() {
	return func() {
		m.mu.Lock()
		if len(m.stalls) < maxStallNotes {
			m.stalls = append(m.stalls, StallNotice(id, description, after))
		}
		m.mu.Unlock()
		select {
		case m.wake <- struct{}{}:
		default:
		}
	}
}

// takeStallNotes returns and forgets the undelivered stall notices; m.mu
// is held.
func (m *Manager) takeStallNotes() []string {
	out := m.stalls
	m.stalls = nil
	return out
}
