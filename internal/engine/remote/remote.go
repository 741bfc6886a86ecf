// Package remote is a child run placed on another machine, as its parent
// holds it: one type for every remote path (reins driving the
// reins-temporal helper, the helper driving the Temporal cluster), so
// that the deadlines and the settlement of docs/engine.md ("Deadlines")
// are one rule in one place.
//
// The parent enforces every deadline itself — the agent's timeout, the
// turn's cancel, a budget stop, Esc: it asks the far side to cancel,
// waits at most the cancel grace (subagents.cancelGrace) for the child's
// own result, and then settles the child from what it holds: the latest
// selected output its heartbeats carried (seed 000's rule, applied on the
// worker by the one fold), stop reason aborted, a fixed diagnostic of
// stage remote naming the cause, and a note that the full log is on the
// worker. It never waits longer, whatever the worker, the cluster or the
// network do.
package remote

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
)

// Far is the far side of a run: what the parent can ask of it.
type Far interface {
	// Cancel asks the far side to cancel the run. Run calls it in the
	// background, once; it should still return within its own bound.
	Cancel()
	// Terminate ends the run on the far side: the grace ran out, the
	// child is settled here. Called in the background, at most once.
	Terminate()
}

// Options are a run's bounds.
type Options struct {
	// Provider names the child's provider in the diagnostic.
	Provider string
	// Timeout is the agent's timeout (0: none): the parent cancels the
	// run then, whatever the worker does.
	Timeout time.Duration
	// Grace is the cancel grace (subagents.cancelGrace; 0: the default).
	Grace time.Duration
	// Lost, when it closes, is the far side gone (the helper process
	// exited): the run settles from what it holds at once.
	Lost <-chan struct{}
	// Clock makes the timers (nil: the real clock); tests mock it.
	Clock Clock
}

// DefaultGrace is the grace when Options.Grace is 0 (config's
// DefaultCancelGrace).
const DefaultGrace = 10 * time.Second

// Clock makes timers: the one seam tests mock.
type Clock interface {
	After(d time.Duration) (<-chan time.Time, func())
}

type realClock struct{}

func (realClock) After(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// Run is one remote run as its parent holds it. Deliver, Progress and
// Note feed it from the far side; Wait, Cancel and Dispose are
// subagent.Run's.
type Run struct {
	far  Far
	opts Options

	result chan outcome.Result // the far side's one result

	cancelOnce sync.Once
	stop       chan struct{} // closed by the first cancel

	mu       sync.Mutex
	cause    outcome.Category // why the parent cancelled
	held     []llm.Block      // the latest selection the far side reported
	where    string           // the worker session holding the child's log
	settled  bool
	termOnce sync.Once
}

// New is a run on far.
func New(far Far, o Options) *Run {
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	if o.Provider == "" {
		o.Provider = "inprocess"
	}
	return &Run{far: far, opts: o, result: make(chan outcome.Result, 1), stop: make(chan struct{})}
}

// Deliver is the far side's settled result; only the first counts.
func (r *Run) Deliver(res outcome.Result) {
	select {
	case r.result <- res:
	default:
	}
}

// Progress records the child's current selected output, as its latest
// heartbeat carried it, and the worker session under which its log lies
// (empty: unknown). A nil output keeps the one held: a heartbeat before
// any output says nothing new.
func (r *Run) Progress(output []llm.Block, workerSession string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(output) > 0 {
		r.held = output
	}
	if workerSession != "" && safeID(workerSession) {
		r.where = workerSession
	}
}

// Held is the selection held now.
func (r *Run) Held() []llm.Block {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// Cancel cancels the run (job_kill, the parent's cancel): the far side
// is asked, the grace starts.
func (r *Run) Cancel() { r.cancel(outcome.CategoryWorkerLost) }

func (r *Run) cancel(cause outcome.Category) {
	r.cancelOnce.Do(func() {
		r.mu.Lock()
		r.cause = cause
		r.mu.Unlock()
		close(r.stop)
		// Asked in the background: a far side that does not take the
		// request (a cluster cut off, a helper that stopped reading)
		// must not hold the grace back.
		go r.far.Cancel()
	})
}

// Cancelled reports whether the run was cancelled.
func (r *Run) Cancelled() bool {
	select {
	case <-r.stop:
		return true
	default:
		return false
	}
}

// Wait waits for the run's one result. When ctx ends, or the agent's
// timeout passes, the run is cancelled and its own result waited for at
// most the grace; then, or when the far side is lost, it is settled from
// what is held (Settle). A result from the far side is settled with what
// is held too: a cancel the cluster answered for the child carries no
// output, the child's last heartbeat does.
func (r *Run) Wait(ctx context.Context) outcome.Result {
	defer func() {
		r.mu.Lock()
		r.settled = true
		r.mu.Unlock()
	}()
	var timeout <-chan time.Time
	if r.opts.Timeout > 0 {
		c, stop := r.opts.Clock.After(r.opts.Timeout)
		defer stop()
		timeout = c
	}
	done := ctx.Done()
	stop := r.stop
	var grace <-chan time.Time
	for {
		select {
		case res := <-r.result:
			return r.fold(res)
		case <-r.opts.Lost:
			select {
			case res := <-r.result:
				return r.fold(res)
			default:
			}
			return r.here(outcome.CategoryEngineUnavailable)
		case <-done:
			done = nil
			r.cancel(outcome.CategoryWorkerLost)
		case <-timeout:
			timeout = nil
			r.cancel(outcome.CategoryTimeout)
		case <-stop:
			stop = nil
			c, cancel := r.opts.Clock.After(r.opts.Grace)
			defer cancel()
			grace = c
		case <-grace:
			r.terminate()
			r.mu.Lock()
			cause := r.cause
			r.mu.Unlock()
			return r.here(cause)
		}
	}
}

// terminate asks the far side to end the run, in the background: the
// settlement does not wait for it.
func (r *Run) terminate() { r.termOnce.Do(func() { go r.far.Terminate() }) }

// here settles the run on the parent's side, from what it holds: aborted
// when it was cancelled, error otherwise (the far side was lost under a
// running child), with the fixed diagnostic of stage remote.
func (r *Run) here(cause outcome.Category) outcome.Result {
	stop := outcome.StopAborted
	if !r.Cancelled() {
		stop = outcome.StopError
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return outcome.Settle(outcome.Result{
		Output:     r.held,
		StopReason: stop,
		Diagnostic: outcome.Diagnostic{Provider: r.opts.Provider, Stage: outcome.StageRemote, Category: cause, StopReason: stop}.String(),
		Note:       r.note(),
	})
}

// fold settles the far side's result with what is held: a cancelled run
// whose result carries no output reports the child's last heartbeat, and
// one cancelled by the agent's timeout says so when the far side did not.
func (r *Run) fold(res outcome.Result) outcome.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	if res.StopReason == outcome.StopAborted && r.Cancelled() {
		if len(res.Output) == 0 && len(r.held) > 0 {
			res.Output = r.held
			res.Note = r.note()
		}
		if res.Diagnostic == "" && r.cause == outcome.CategoryTimeout {
			res.Diagnostic = outcome.Diagnostic{Provider: r.opts.Provider, Stage: outcome.StageRemote, Category: outcome.CategoryTimeout, StopReason: outcome.StopAborted}.String()
		}
	}
	return outcome.Settle(res)
}

// note is the line of a result settled from a heartbeat: the child's
// whole log is on its worker. r.mu is held.
func (r *Run) note() string {
	if len(r.held) == 0 {
		return ""
	}
	if r.where != "" {
		return "the child's full log is on its worker, under worker session " + r.where
	}
	return "the child's full log is on its worker"
}

// Dispose cancels a run nobody waited for to its end.
func (r *Run) Dispose() error {
	r.mu.Lock()
	settled := r.settled
	r.mu.Unlock()
	if !settled {
		r.Cancel()
	}
	return nil
}

// safeID reports whether s may be quoted in a note: a session id as
// reins makes them, nothing a worker could use to write prose.
func safeID(s string) bool {
	if len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// Bound is output cut to max bytes of JSON: as is when it fits, else its
// text alone, cut on a UTF-8 boundary (a heartbeat carries at most the
// result cap; subagent_output would page the rest, which is on the
// worker).
func Bound(output []llm.Block, max int) []llm.Block {
	if len(output) == 0 || max <= 0 {
		return output
	}
	if b, err := json.Marshal(output); err == nil && len(b) <= max {
		return output
	}
	text := llm.BlocksText(output)
	text = text[:outcome.Cut(text, 0, max)]
	if text == "" {
		return nil
	}
	return []llm.Block{{Type: llm.BlockText, Text: text}}
}
