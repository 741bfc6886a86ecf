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
	"github.com/reinsdev/reins/internal/engine/remote"
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
// (subagents.startTimeout) and these only catch a helper that stopped
// answering. A run's deadlines are remote.Run's (subagents.cancelGrace).
const (
	// startTimeout is the submit bound when subagents.startTimeout is 0.
	startTimeout = 30 * time.Second
	// answerSlack is added to the helper's own bounds.
	answerSlack = 30 * time.Second
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
	grace  time.Duration
	maxOut int
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
	grace := cfg.CancelGrace
	if grace <= 0 {
		grace = config.DefaultCancelGrace
	}
	t := cfg.Temporal
	e := &helperEngine{
		path: path, model: model, submit: submit, grace: grace, maxOut: cfg.MaxResultBytes, logf: logf,
		children:  newBounded[string](maxChildSessions, 0),
		histories: newBounded[[]session.Event](maxHistories, maxHistoryBytes),
		args:      []string{"client", "--address", t.Address, "--namespace", t.Namespace, "--task-queue", t.TaskQueue, "--submit", submit.String(), "--cancel-grace", grace.String()},
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
	// refused is set when the helper spoke another protocol version (its
	// hello said so, or it said none): it is ended, its runs unavailable.
	refused error
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
	if err := h.send(wire.Msg{Op: wire.OpHello, Version: wire.ProtocolVersion}); err != nil {
		e.log("%s: hello: %v", HelperName, err)
	}
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
	hello := false
	for sc.Scan() {
		var m wire.Msg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			e.log("%s: a line that is not the protocol (%d bytes)", HelperName, len(sc.Bytes()))
			continue
		}
		if !hello {
			// The first line is the helper's hello: a helper of another
			// protocol version is refused, in one line naming both.
			if m.Op != wire.OpHello || m.Version != wire.ProtocolVersion {
				err := versionError(m)
				e.log("%v", err)
				h.mu.Lock()
				h.refused = err
				h.mu.Unlock()
				h.in.Close() // it ends; its runs settle engine-unavailable
				io.Copy(io.Discard, r)
				return
			}
			hello = true
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
		case wire.OpProgress:
			r.rem.Progress(m.Output, m.Session)
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
				r.rem.Deliver(*m.Result)
			}
		}
	}
	if err := sc.Err(); err != nil {
		e.log("%s: %v", HelperName, err)
	}
}

// versionError is the one line of a helper that spoke another protocol
// version (or none: an older build) in its first line m.
func versionError(m wire.Msg) error {
	if m.Op != wire.OpHello || m.Version == 0 {
		return fmt.Errorf("%s speaks no protocol version (an older build); reins speaks version %d: use the %s of the same release", HelperName, wire.ProtocolVersion, HelperName)
	}
	return fmt.Errorf("%s speaks protocol version %d, reins speaks version %d: use the %s of the same release", HelperName, m.Version, wire.ProtocolVersion, HelperName)
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

func (h *helper) add(req subagent.Request, provider string, grace time.Duration) *helperRun {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nextID++
	r := &helperRun{h: h, id: h.nextID, runID: req.RunID, childID: req.ChildID, budget: req.Budget, provider: provider, started: make(chan *wire.StartFailure, 1)}
	timeout := time.Duration(0)
	if req.Agent != nil {
		timeout = req.Agent.Timeout
	}
	r.rem = remote.New(helperFar{h, r.id}, remote.Options{Provider: provider, Timeout: timeout, Grace: grace, Lost: h.dead})
	h.runs[r.id] = r
	return r
}

// helperFar is the helper's side of a run.
type helperFar struct {
	h  *helper
	id uint64
}

func (f helperFar) Cancel() { f.h.send(wire.Msg{Op: wire.OpCancel, ID: f.id}) }

// Terminate: reins settled the run; the helper terminates its workflow,
// and an answer that comes later is nobody's.
func (f helperFar) Terminate() {
	f.h.send(wire.Msg{Op: wire.OpTerminate, ID: f.id})
	f.h.drop(f.id)
}

// why is the helper's refusal when it was refused (another protocol
// version), else err.
func (h *helper) why(err error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.refused != nil {
		return h.refused
	}
	return err
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
	t.MaxOutput = e.maxOut
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
	r := h.add(req, t.Provider, e.grace)
	if err := h.send(wire.Msg{Op: wire.OpStart, ID: r.id, Task: &t}); err != nil {
		h.drop(r.id)
		return nil, &subagent.StartError{Diagnostic: unavailable(t.Provider).Diagnostic, Err: h.why(fmt.Errorf("%s: %w", HelperName, err))}
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
		return nil, &subagent.StartError{Diagnostic: unavailable(t.Provider).Diagnostic, Err: h.why(fmt.Errorf("%s exited", HelperName))}
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

// helperRun is a submitted run: remote.Run's deadlines and settlement,
// fed by the helper's answers.
type helperRun struct {
	h        *helper
	id       uint64
	runID    string
	childID  string
	provider string
	rem      *remote.Run
	// budget is the run's budget, charged with the spend its worker
	// reports (charge); charged is what was charged so far.
	budget   *budget.Budget
	charged  wire.Spent
	chargeMu sync.Mutex
	started  chan *wire.StartFailure
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

// Wait waits for the run's one result under remote.Run's deadlines.
func (r *helperRun) Wait(ctx context.Context) outcome.Result { return r.rem.Wait(ctx) }

// Cancel cancels the run: the helper cancels the workflow, the worker's
// child ends aborted through its own teardown.
func (r *helperRun) Cancel() { r.rem.Cancel() }

// Dispose cancels a run nobody waited for to its end.
func (r *helperRun) Dispose() error { return r.rem.Dispose() }
