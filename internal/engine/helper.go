package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/engine/wire"
	"github.com/reinsdev/reins/internal/helperbin"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/proc"
)

// The Temporal helper binary: reins drives `reins-temporal client` for a
// parent's children, and `reins worker` becomes `reins-temporal worker`.
// The Temporal SDK lives only there: its init alone cost every reins
// process 20 ms and 13 MiB (BENCHMARKS.md, "Start-up").
const (
	HelperName = "reins-temporal"
	// HelperEnv names the helper's path, over the search.
	HelperEnv = "REINS_TEMPORAL"
)

// ErrNoHelper is the temporal engine asked of a reins with no
// reins-temporal beside it or on PATH.
var ErrNoHelper = errors.New(HelperName + " not found beside reins or on PATH: the temporal engine needs it (docs/engine.md)")

// Helper finds reins-temporal: $REINS_TEMPORAL, else beside this
// executable (how a release and the npm package ship it), else on PATH
// (helperbin.Find).
func Helper() (string, error) {
	p, err := helperbin.Find(HelperName, HelperEnv)
	if err != nil {
		return "", ErrNoHelper
	}
	return p, nil
}

// Bounds of the parent's side; the helper applies the engine's own
// (subagents.startTimeout, the cancel grace) and these only catch a
// helper that stopped answering.
const (
	// startTimeout is the submit bound when subagents.startTimeout is 0.
	startTimeout = 30 * time.Second
	// answerSlack is added to the helper's own bounds.
	answerSlack = 30 * time.Second
	// cancelGrace is how long a cancelled run's result is waited for
	// (the helper's own grace is 30 s).
	cancelGrace = 30*time.Second + answerSlack
)

// helperEngine is the temporal engine as seen from reins: each run is
// submitted through one `reins-temporal client` process, started at the
// first run (a parent that never delegates never starts it) and again
// after it died.
type helperEngine struct {
	path   string
	args   []string
	model  string
	submit time.Duration
	logf   func(string, ...any)

	mu     sync.Mutex
	h      *helper
	closed bool

	// children are the settled runs' own sessions on the workers, by run
	// id, until ChildSession takes them (the batch does, at once) or
	// newer runs push them out (a subagent run's is never taken).
	children *bounded[string]
	// histories are the settled children's conversations, by child id:
	// what a continuation ships to whichever worker takes it. The oldest
	// are forgotten beyond the bounds; continuing one of those is refused
	// not-continuable.
	histories *bounded[[]session.Event]
}

// Bounds of what the engine remembers of settled runs.
const (
	// maxChildSessions bounds the run → worker session map.
	maxChildSessions = 1024
	// maxHistories and maxHistoryBytes bound the continuations kept:
	// as many children as a parent's table holds, 64 MiB in all.
	maxHistories    = 512
	maxHistoryBytes = 64 << 20
)

// ChildSession takes the session on its worker of settled run runID (a
// subagent.Request's RunID), when the worker said it: a temporal child's
// Session is empty at its start, its session on the worker known only
// with its result. The batch's results name it (sessionId).
func (e *helperEngine) ChildSession(runID string) string {
	s, _ := e.children.take(runID)
	return s
}

func openTemporal(cfg config.Subagents, model string, logf func(string, ...any)) (subagent.Engine, func(), error) {
	path, err := Helper()
	if err != nil {
		return nil, nil, fmt.Errorf("subagents.engine temporal: %w", err)
	}
	submit := cfg.StartTimeout
	if submit <= 0 {
		submit = startTimeout
	}
	t := cfg.Temporal
	e := &helperEngine{
		path: path, model: model, submit: submit, logf: logf,
		children:  newBounded[string](maxChildSessions, 0),
		histories: newBounded[[]session.Event](maxHistories, maxHistoryBytes),
		args:      []string{"client", "--address", t.Address, "--namespace", t.Namespace, "--task-queue", t.TaskQueue, "--submit", submit.String()},
	}
	return e, e.close, nil
}

func (e *helperEngine) log(format string, args ...any) {
	if e.logf != nil {
		e.logf(format, args...)
	}
}

// helper is one running `reins-temporal client`.
type helper struct {
	p    *proc.Process
	in   io.WriteCloser
	wmu  sync.Mutex
	dead chan struct{} // closed when its stdout ended

	mu     sync.Mutex
	nextID uint64
	runs   map[uint64]*helperRun
}

// current returns the running helper, starting one when there is none.
func (e *helperEngine) current() (*helper, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errors.New("the temporal engine is closed")
	}
	if e.h != nil {
		select {
		case <-e.h.dead:
			e.h.p.Dispose(proc.DefaultLadder)
			e.h = nil
		default:
			return e.h, nil
		}
	}
	cmd := exec.Command(e.path, e.args...)
	p, pipes, err := proc.StartPiped(cmd)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", HelperName, err)
	}
	h := &helper{p: p, in: pipes.Stdin, dead: make(chan struct{}), runs: map[uint64]*helperRun{}}
	go h.read(pipes.Stdout, e)
	go logLines(pipes.Stderr, e.log)
	e.h = h
	return h, nil
}

// close ends the helper: its stdin closes, it exits, runs already
// submitted go on on the cluster.
func (e *helperEngine) close() {
	e.mu.Lock()
	e.closed = true
	h := e.h
	e.h = nil
	e.mu.Unlock()
	if h != nil {
		if err := h.p.Dispose(proc.DefaultLadder); err != nil {
			e.log("%s: %v", HelperName, err)
		}
	}
}

// read dispatches the helper's answers until its stdout ends.
func (h *helper) read(r io.ReadCloser, e *helperEngine) {
	defer close(h.dead)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), wire.MaxLine)
	for sc.Scan() {
		var m wire.Msg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			e.log("%s: a line that is not the protocol (%d bytes)", HelperName, len(sc.Bytes()))
			continue
		}
		h.mu.Lock()
		r := h.runs[m.ID]
		if m.Op == wire.OpResult || (m.Op == wire.OpStarted && m.Failed != nil) {
			delete(h.runs, m.ID)
		}
		h.mu.Unlock()
		if r == nil {
			continue
		}
		// Each channel holds one answer; a repeated one (a helper that
		// breaks the protocol) is dropped rather than block this reader.
		switch m.Op {
		case wire.OpStarted:
			select {
			case r.started <- m.Failed:
			default:
			}
		case wire.OpSpent:
			if m.Spent != nil {
				r.charge(*m.Spent)
			}
		case wire.OpResult:
			if m.Session != "" && r.runID != "" {
				e.children.put(r.runID, m.Session, 0)
			}
			switch {
			case r.childID == "":
			case m.History != nil:
				e.histories.put(r.childID, m.History, wire.SeedSize(m.History))
			case m.Session != "":
				// The child ran but its conversation did not come back:
				// the one held is no longer its whole conversation.
				e.histories.take(r.childID)
			}
			if m.Spent != nil {
				r.charge(*m.Spent) // what the live reports had not charged
			}
			if m.Result != nil {
				select {
				case r.result <- *m.Result:
				default:
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		e.log("%s: %v", HelperName, err)
	}
}

// logLines copies the helper's stderr, line by line, to the host log.
func logLines(r io.ReadCloser, logf func(string, ...any)) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4<<10), 64<<10)
	for sc.Scan() {
		logf("%s: %s", HelperName, sc.Text())
	}
	io.Copy(io.Discard, r) // a line past the bound: drain, never block the helper
}

func (h *helper) send(m wire.Msg) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	h.wmu.Lock()
	defer h.wmu.Unlock()
	_, err = h.in.Write(append(b, '\n'))
	return err
}

func (h *helper) add(req subagent.Request, provider string) *helperRun {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nextID++
	r := &helperRun{h: h, id: h.nextID, runID: req.RunID, childID: req.ChildID, budget: req.Budget, provider: provider, started: make(chan *wire.StartFailure, 1),
		result: make(chan outcome.Result, 1), stop: make(chan struct{})}
	h.runs[r.id] = r
	return r
}

func (h *helper) drop(id uint64) {
	h.mu.Lock()
	delete(h.runs, id)
	h.mu.Unlock()
}

// unavailable is the result of a run whose helper is gone or silent.
func unavailable(provider string) outcome.Result {
	return outcome.Settle(outcome.Result{
		StopReason: outcome.StopError,
		Diagnostic: outcome.Diagnostic{Provider: provider, Stage: outcome.StageEngine, Category: outcome.CategoryEngineUnavailable, StopReason: outcome.StopError}.String(),
	})
}

// Start submits the run through the helper and returns once the cluster
// accepted it.
func (e *helperEngine) Start(ctx context.Context, req subagent.Request, _ subagent.Provider) (subagent.Run, error) {
	t := wire.TaskOf(req, e.model)
	if req.Continues != "" && t.Provider != config.ProviderInProcess {
		return nil, notShipped(t.Provider, "only an in-process child on the temporal engine can be continued")
	}
	if req.Continues != "" {
		// The child's conversation goes with the task (docs/engine.md,
		// "Continuations and forks"): any worker can take it.
		hist, ok := e.histories.get(req.Continues)
		if !ok || len(hist) == 0 {
			return nil, notShipped(t.Provider, "the conversation of a temporal child to continue is not held here (not in process, too large, forgotten, or from an earlier reins)")
		}
		t.Seed = hist
	}
	if wire.SeedSize(t.Seed) > wire.MaxSeed {
		return nil, notShipped(t.Provider, fmt.Sprintf("the conversation to ship (%d bytes) is over %d bytes", wire.SeedSize(t.Seed), wire.MaxSeed))
	}
	h, err := e.current()
	if err != nil {
		return nil, &subagent.StartError{Diagnostic: unavailable(t.Provider).Diagnostic, Err: err}
	}
	r := h.add(req, t.Provider)
	if err := h.send(wire.Msg{Op: wire.OpStart, ID: r.id, Task: &t}); err != nil {
		h.drop(r.id)
		return nil, &subagent.StartError{Diagnostic: unavailable(t.Provider).Diagnostic, Err: fmt.Errorf("%s: %w", HelperName, err)}
	}
	bound := time.NewTimer(e.submit + answerSlack)
	defer bound.Stop()
	select {
	case f := <-r.started:
		if f != nil {
			return nil, &subagent.StartError{Diagnostic: f.Diagnostic, StopReason: f.StopReason, Err: errors.New("the temporal cluster did not accept the run (the helper's log line above says why)")}
		}
		e.log("subagent %s: submitted through %s", t.RunID, HelperName)
		return r, nil
	case <-ctx.Done():
		h.send(wire.Msg{Op: wire.OpCancel, ID: r.id})
		h.drop(r.id)
		return nil, &subagent.StartError{StopReason: outcome.StopAborted, Err: context.Cause(ctx)}
	case <-h.dead:
		return nil, &subagent.StartError{Diagnostic: unavailable(t.Provider).Diagnostic, Err: fmt.Errorf("%s exited", HelperName)}
	case <-bound.C:
		h.send(wire.Msg{Op: wire.OpCancel, ID: r.id})
		h.drop(r.id)
		return nil, &subagent.StartError{Diagnostic: unavailable(t.Provider).Diagnostic, Err: fmt.Errorf("%s did not answer a start", HelperName)}
	}
}

// notShipped refuses a continuation or fork whose conversation cannot go
// with the task: it settles error with category not-continuable.
func notShipped(provider, why string) *subagent.StartError {
	return &subagent.StartError{
		Diagnostic: outcome.Diagnostic{Provider: provider, Stage: outcome.StageEngine, Category: outcome.CategoryNotContinuable, StopReason: outcome.StopError}.String(),
		Err:        errors.New(why),
	}
}

// helperRun is a submitted run.
type helperRun struct {
	h        *helper
	id       uint64
	runID    string
	childID  string
	provider string
	// budget is the run's budget, charged with the spend its worker
	// reports (charge); charged is what was charged so far.
	budget   *budget.Budget
	charged  wire.Spent
	chargeMu sync.Mutex
	started  chan *wire.StartFailure
	result   chan outcome.Result

	cancelOnce sync.Once
	stop       chan struct{} // closed by the first cancel
	mu         sync.Mutex
	settled    bool
}

// Session is empty: the child's session is on the worker (docs/engine.md).
func (r *helperRun) Session() string { return "" }

// ChargesBudget is subagent.SelfCharging: the run charged its budget
// with the spend its worker reported, live and at the end.
func (r *helperRun) ChargesBudget() bool { return r.budget != nil }

// charge charges the run's budget with what spent (cumulative) adds to
// what was charged.
func (r *helperRun) charge(spent wire.Spent) {
	if r.budget == nil {
		return
	}
	r.chargeMu.Lock()
	defer r.chargeMu.Unlock()
	priced, unpriced := spent.Since(r.charged)
	if priced.IsZero() && unpriced.IsZero() {
		return
	}
	r.budget.Charge(priced)
	r.budget.Charge(unpriced)
	r.charged = spent
}

// Wait waits for the run's one result. When ctx ends first, the run is
// cancelled and its aborted result waited for, at most cancelGrace.
func (r *helperRun) Wait(ctx context.Context) outcome.Result {
	stopParent := context.AfterFunc(ctx, r.Cancel)
	defer stopParent()
	defer func() {
		r.mu.Lock()
		r.settled = true
		r.mu.Unlock()
	}()
	stop := r.stop
	var grace <-chan time.Time
	for {
		select {
		case res := <-r.result:
			return res
		case <-r.h.dead:
			select {
			case res := <-r.result:
				return res
			default:
			}
			if r.cancelled() {
				return outcome.Result{StopReason: outcome.StopAborted}
			}
			return unavailable(r.provider)
		case <-stop:
			stop = nil
			t := time.NewTimer(cancelGrace)
			defer t.Stop()
			grace = t.C
		case <-grace:
			r.h.drop(r.id)
			return outcome.Result{StopReason: outcome.StopAborted}
		}
	}
}

func (r *helperRun) cancelled() bool {
	select {
	case <-r.stop:
		return true
	default:
		return false
	}
}

// Cancel cancels the run: the helper cancels the workflow, the worker's
// child ends aborted through its own teardown.
func (r *helperRun) Cancel() {
	r.cancelOnce.Do(func() {
		close(r.stop)
		r.h.send(wire.Msg{Op: wire.OpCancel, ID: r.id})
	})
}

// Dispose cancels a run nobody waited for to its end.
func (r *helperRun) Dispose() error {
	r.mu.Lock()
	settled := r.settled
	r.mu.Unlock()
	if !settled {
		r.Cancel()
	}
	return nil
}
