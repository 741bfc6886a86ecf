package subagent

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/reinsdev/reins/internal/childproc"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
)

// maxStallNotes bounds the undelivered stall notices: each stalled job
// settles (and gets its own notice) right after, so a parent that does
// not drain loses nothing it would need.
const maxStallNotes = 64

// stallResult settles a run its provider stopped because the child stalled
// (Staller): aborted, category stalled, its partial output kept. A budget
// that ran out is the better explanation and wins; a completed run keeps
// its answer.
func stallResult(req Request, run Run, r outcome.Result) outcome.Result {
	s, ok := run.(Staller)
	if !ok || !s.Stalled() || r.StopReason == outcome.StopCompleted || req.Budget.Err() != nil {
		return r
	}
	p := providerOf(req)
	r.StopReason = outcome.StopAborted
	r.Diagnostic = outcome.Diagnostic{Provider: p, Stage: budgetStage.Get()[p], Category: outcome.CategoryStalled, StopReason: outcome.StopAborted}.String()
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

// modelWatch follows an in-process child's own events to tell when a model
// request is under way: from step/start or llm/retry-started until the
// step's assistant/message, a retry's wait (llm/retry) or the turn's end.
// Only then can the child stall: a child running tools or waiting for its
// jobs is silent by right. Every event is progress.
type modelWatch struct{ inRequest atomic.Bool }

func (w *modelWatch) event(e session.Event, life *childproc.Lifetime) {
	switch e.Payload.(type) {
	case session.StepStart, session.LLMRetryStarted:
		w.inRequest.Store(true)
	case session.AssistantMessage, session.LLMRetry, session.TurnEnd, session.ToolCall:
		w.inRequest.Store(false)
	}
	if life != nil {
		life.Progress()
	}
}

func (w *modelWatch) waiting() bool { return w.inRequest.Load() }
