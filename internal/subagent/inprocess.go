package subagent

import (
	"context"
	"fmt"
	"sync"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/childproc"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/textcut"
	"github.com/reinsdev/reins/internal/tool"
)

// MaxWakeups bounds the turns a parent runs only to receive background-job
// notices, so a model that keeps starting jobs cannot keep a run alive
// forever.
const MaxWakeups = 20

// RunUntilIdle runs a turn for prompt and then, while background jobs run
// or their notices are undelivered, waits and runs notice-only turns — at
// most MaxWakeups of them. `reins run` and in-process children both end
// this way: only when the parent is idle and no job is running.
//
// When it stops waiting with jobs still running or notices undelivered —
// ctx is done, or MaxWakeups is reached — it kills those jobs and records
// a closing turn (agent.CloseTurn) that holds every job's subagent/end and
// job/notice: ended aborted (by whoever cancelled ctx), or error
// MAX_WAKEUPS. No job leaves the log silently.
//
// The result is the worst turn's (agent.Severity; the earliest of equals),
// so a failed first turn is not hidden by a notice-only turn that
// completes, with the usage of every turn it ran.
func RunUntilIdle(ctx context.Context, a *agent.Agent, m *Manager, prompt string) agent.TurnResult {
	// A budget that runs out ends the run as a cancellation does, with
	// the budget as the cause (agent.AbortedBy).
	ctx, unbind := a.Budget.Bind(ctx)
	defer unbind()
	ctx, endTrace := a.TraceRun(ctx) // the run's span, when traced
	res := a.RunTurn(ctx, prompt)
	worst, usage := res, res.Usage
	note := func(r agent.TurnResult) {
		usage = usage.Add(r.Usage)
		if agent.Severity(r.Reason) > agent.Severity(worst.Reason) {
			worst = r
		}
	}
	wake := 0
	for ; m != nil && wake < MaxWakeups && m.Busy() && ctx.Err() == nil; wake++ {
		if m.WaitSettled(ctx) != nil {
			break
		}
		note(a.RunTurn(ctx, ""))
	}
	if m != nil && m.Busy() {
		m.KillRunning()
		if ctx.Err() != nil {
			note(a.CloseTurn(session.ReasonAborted, agent.AbortedBy(ctx), nil))
		} else {
			note(a.CloseTurn(session.ReasonError, "", &session.Failure{Code: llm.CodeMaxWakeups,
				Message: fmt.Sprintf("background jobs still ran after %d notice-only turns; they were killed", MaxWakeups)}))
		}
	}
	worst.Usage = usage
	endTrace(worst)
	return worst
}

// Child is an in-process child session, as built by the harness.
type Child struct {
	Agent *agent.Agent
	Log   *session.Log
	// Subagents is the child's own manager (grandchildren), if any.
	Subagents *Manager
	// Close releases the child's children and its log.
	Close func() error
}

// InProcess runs children as agent loops in this process, each with its own
// session log. Its children can be continued: a settled run stays alive as
// a Keeper (the same agent takes the follow-up), and after its idle
// teardown Continue resumes it from its log.
type InProcess struct {
	// NewChild builds the child session for req; observe must receive every
	// event of the child's log. A request with ChildSession set reopens
	// that session (its history loaded) instead of creating one.
	NewChild func(req Request, observe func(session.Header, session.Event)) (*Child, error)
}

// Start creates the child session and starts its turn.
func (p *InProcess) Start(_ context.Context, req Request) (Run, error) {
	sink := &inprocSink{}
	child, err := p.NewChild(req, sink.observe)
	if err != nil {
		return nil, &StartError{
			Diagnostic: outcome.Diagnostic{Provider: config.ProviderInProcess, Stage: outcome.StageInitialize, Category: outcome.CategoryConfiguration, StopReason: outcome.StopError}.String(),
			Err:        err,
		}
	}
	return sink.start(child, req), nil
}

// Continue resumes the child session req.ChildSession from its log and
// runs the follow-up.
func (p *InProcess) Continue(ctx context.Context, req Request) (Run, error) {
	if req.ChildSession == "" {
		return nil, &StartError{Err: ErrNotContinuable}
	}
	return p.Start(ctx, req)
}

// inprocSink routes the child log's events to the fold of its current run:
// a kept child runs again with a fresh fold, so each run's output is its
// own.
type inprocSink struct {
	mu  sync.Mutex
	run *inprocRun
}

func (s *inprocSink) observe(h session.Header, e session.Event) {
	var grand *llm.Usage
	if d, ok := e.Payload.(session.SubagentEnd); ok {
		grand = d.Usage
	}
	s.mu.Lock()
	r := s.run
	if r != nil {
		r.fold.Push(e)
		if grand != nil {
			r.grand = r.grand.Add(*grand)
		}
	}
	s.mu.Unlock()
	if r != nil && h.ID == r.child.Log.Header().ID {
		r.model.event(e, r.life) // the child's own session, not its children's
		r.noteRefusal(e)
	}
}

func (s *inprocSink) start(child *Child, req Request) *inprocRun {
	r := &inprocRun{child: child, sink: s}
	r.life = childproc.Start(req.Agent.Timeout, agent.ErrAbortedByTimeout)
	r.life.StallOnlyWhile(r.model.waiting)
	s.mu.Lock()
	s.run = r // after r.life is set: observe reads it
	s.mu.Unlock()
	r.life.WatchStall(req.StallTimeout, req.OnStall)
	r.life.Go(func() { r.res = RunUntilIdle(r.life.Context(), child.Agent, child.Subagents, req.Prompt) })
	return r
}

type inprocRun struct {
	child *Child
	sink  *inprocSink
	life  *childproc.Lifetime // the one run lifecycle of every provider
	res   agent.TurnResult    // set when the run settled

	fold outcome.Fold // guarded by sink.mu
	// calls are the child's own calls in flight (id → tool name) and
	// refused/refusals what refused them (outcome.Result.Refusals); the
	// log's lock orders the events, mu guards them against Wait.
	mu       sync.Mutex
	calls    map[string]string
	refused  int
	refusals []string
	grand    llm.Usage  // the usage of this run's children (their subagent/end), guarded by sink.mu
	model    modelWatch // whether a model request is under way (stall.go)
}

// Again runs the follow-up on the same child agent: its history is still
// in memory. The new run owns the child.
func (r *inprocRun) Again(_ context.Context, req Request) (Run, error) {
	<-r.life.Done()
	r.life.End(nil)
	return r.sink.start(r.child, req), nil
}

// Stalled reports that the child's model request made no progress for
// subagents.stallTimeout and the run was stopped (Staller).
func (r *inprocRun) Stalled() bool { return r.life.Stalled() }

func (r *inprocRun) Session() string { return r.child.Log.Header().ID }

func (r *inprocRun) Wait(ctx context.Context) outcome.Result {
	r.life.Wait(ctx, agent.ErrAbortedByParent)
	r.sink.mu.Lock()
	out, grand := r.fold.Collect(), r.grand
	r.sink.mu.Unlock()
	r.mu.Lock()
	refused, refusals := r.refused, r.refusals
	r.mu.Unlock()
	// This run's children only: a kept child's manager also counts those
	// of its earlier runs.
	usage := r.res.Usage.Add(grand)
	res := outcome.Result{Output: out, StopReason: outcome.StopReasonOf(r.res.Reason), Usage: usage, Refused: refused, Refusals: refusals}
	switch {
	case res.StopReason == outcome.StopError:
		cat := outcome.CategoryUnknown
		if r.res.Failure != nil {
			cat = outcome.CodeCategory(r.res.Failure.Code)
		}
		res.Diagnostic = outcome.Diagnostic{Provider: config.ProviderInProcess, Stage: outcome.StageRun, Category: cat, StopReason: outcome.StopError}.String()
	case res.StopReason == outcome.StopAborted && r.res.By == session.AbortedByTimeout:
		res.Diagnostic = outcome.Diagnostic{Provider: config.ProviderInProcess, Stage: outcome.StageRun, Category: outcome.CategoryTimeout, StopReason: outcome.StopAborted}.String()
	}
	return res
}

func (r *inprocRun) Cancel() { r.life.End(agent.ErrAbortedByUser) }

func (r *inprocRun) Dispose() error {
	return r.life.Dispose(agent.ErrAbortedByParent, r.child.Close)
}

// maxCalls bounds the calls in flight a run remembers.
const maxCalls = 256

// noteRefusal notes a refused call of the child's own session (e is one of
// its events).
func (r *inprocRun) noteRefusal(e session.Event) {
	switch d := e.Payload.(type) {
	case session.ToolCall:
		r.mu.Lock()
		if r.calls == nil {
			r.calls = map[string]string{}
		}
		if len(r.calls) < maxCalls {
			r.calls[d.CallID] = d.Name
		}
		r.mu.Unlock()
	case session.ToolResult:
		r.mu.Lock()
		defer r.mu.Unlock()
		name, ok := r.calls[d.CallID]
		delete(r.calls, d.CallID)
		if !ok || !d.IsError || !tool.IsRefusal(name, d.Content) {
			return
		}
		r.refused++
		if len(r.refusals) < outcome.MaxRefusals {
			r.refusals = append(r.refusals, textcut.OneLine(textcut.Cut(d.Content, 300)))
		}
	}
}
