package temporal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/engine/wire"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/subagent"
)

// Bounds of the parent's side.
const (
	// StartTimeout bounds submitting a run to the cluster.
	StartTimeout = 30 * time.Second
	// CancelGrace is how long a cancelled run's own aborted result is
	// waited for before the parent settles it aborted by itself (a
	// cluster gone at that moment must not hold the parent).
	CancelGrace = 30 * time.Second
	// cancelRPC bounds the cancel request itself.
	cancelRPC = 10 * time.Second
)

// Engine submits child runs to a Temporal cluster as ChildRun workflows
// (subagent.Engine).
type Engine struct {
	Client    client.Client
	TaskQueue string
	// Model is the parent's PROVIDER/MODEL, the children's default.
	Model string
	// Submit bounds submitting one run (0: StartTimeout): a cluster that
	// does not accept it by then settles it engine-unavailable.
	Submit time.Duration
	Logf   func(format string, args ...any)
}

// Dial makes the engine's client for cfg. The client is lazy: a cluster
// that is down is found by the first child, which settles error with
// category engine-unavailable, rather than stopping reins at start.
func Dial(cfg config.Temporal, logf func(string, ...any)) (*Engine, error) {
	c, err := client.NewLazyClient(client.Options{HostPort: cfg.Address, Namespace: cfg.Namespace, Logger: Logger(logf)})
	if err != nil {
		return nil, err
	}
	return &Engine{Client: c, TaskQueue: cfg.TaskQueue, Logf: logf}, nil
}

// Close closes the client. Runs already submitted go on on the cluster.
func (e *Engine) Close() { e.Client.Close() }

func (e *Engine) logf(format string, args ...any) {
	if e.Logf != nil {
		e.Logf(format, args...)
	}
}

// TaskOf is the wire form of req.
func (e *Engine) TaskOf(req subagent.Request) Task { return wire.TaskOf(req, e.Model) }

// Start submits the run and returns once the cluster has accepted it. prov
// is unused: the worker runs the child with its own provider.
func (e *Engine) Start(ctx context.Context, req subagent.Request, _ subagent.Provider) (subagent.Run, error) {
	return e.StartTask(ctx, e.TaskOf(req))
}

// StartTask submits t (Start of a request already in wire form: what
// `reins-temporal client` is given).
func (e *Engine) StartTask(ctx context.Context, t Task) (subagent.Run, error) {
	var rnd [6]byte
	rand.Read(rnd[:])
	id := fmt.Sprintf("reins-%s-%s-%s", t.ParentSession, t.RunID, hex.EncodeToString(rnd[:]))
	opts := client.StartWorkflowOptions{ID: id, TaskQueue: e.TaskQueue}
	if t.Key != "" {
		// A keyed run (a batch task) is one workflow across reins
		// processes: a running one is re-attached to, a completed one
		// answers with its result; one that failed or was cancelled runs
		// again.
		opts.ID = "reins-key-" + t.Key
		opts.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
		opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY
		id = opts.ID
	}
	submit := e.Submit
	if submit <= 0 {
		submit = StartTimeout
	}
	sctx, cancel := context.WithTimeout(ctx, submit)
	defer cancel()
	wr, err := e.Client.ExecuteWorkflow(sctx, opts, WorkflowName, t)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if t.Key != "" && errors.As(err, &started) {
		// It completed while no reins waited for it: its result is the
		// task's, read from the cluster rather than run again.
		wr, err = e.Client.GetWorkflow(sctx, id, ""), nil
		e.logf("subagent %s: temporal workflow %s completed before; its result is taken", t.RunID, id)
	}
	if err != nil {
		r := Failure(err, t.Provider)
		if ctx.Err() != nil {
			r = outcome.Result{StopReason: outcome.StopAborted}
		}
		return nil, &subagent.StartError{Diagnostic: r.Diagnostic, StopReason: r.StopReason, Err: err}
	}
	e.logf("subagent %s: temporal workflow %s", t.RunID, id)
	return &run{e: e, id: id, runID: wr.GetRunID(), wr: wr, provider: t.Provider, stop: make(chan struct{})}, nil
}

type run struct {
	e        *Engine
	id       string
	runID    string
	wr       client.WorkflowRun
	provider string

	cancelOnce sync.Once
	stop       chan struct{} // closed by the first cancel
	mu         sync.Mutex
	settled    bool
	out        Outcome // once settled
}

// Outcome is the settled run's outcome beyond its Result (the child's
// session on the worker, its conversation, its spend), known once Wait
// returned; zero before.
func (r *run) Outcome() Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out
}

// WatchSpent calls fn with the child tree's spend as its worker
// heartbeats it (the activity's heartbeat details), every period, until
// ctx ends: how a budget is charged live across workers.
func (r *run) WatchSpent(ctx context.Context, every time.Duration, fn func(wire.Spent)) {
	t := time.NewTicker(every)
	defer t.Stop()
	var last wire.Spent
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		dctx, cancel := context.WithTimeout(ctx, cancelRPC)
		d, err := r.e.Client.DescribeWorkflowExecution(dctx, r.id, r.runID)
		cancel()
		if err != nil {
			continue
		}
		for _, a := range d.GetPendingActivities() {
			var s wire.Spent
			if a.GetHeartbeatDetails() == nil || converter.GetDefaultDataConverter().FromPayloads(a.GetHeartbeatDetails(), &s) != nil {
				continue
			}
			if s.Tokens > last.Tokens || s.USD > last.USD {
				last = s
				fn(s)
			}
		}
	}
}

// ChildSession is the child's own session on the worker that ran it,
// known once Wait returned (empty before, or when it never started). It
// is not Session: that one a cold resume loads here.
func (r *run) ChildSession() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.ChildSession
}

// Session is empty: the child's session is on the worker (docs/engine.md).
func (r *run) Session() string { return "" }

// Wait waits for the workflow's one result. When ctx ends first, the run
// is cancelled and its aborted result waited for, at most CancelGrace.
func (r *run) Wait(ctx context.Context) outcome.Result {
	gctx, gcancel := context.WithCancel(context.Background())
	defer gcancel()
	stopParent := context.AfterFunc(ctx, r.Cancel)
	defer stopParent()
	go func() {
		select {
		case <-r.stop:
			select {
			case <-time.After(CancelGrace):
				gcancel()
			case <-gctx.Done():
			}
		case <-gctx.Done():
		}
	}()
	var out Outcome
	err := r.wr.Get(gctx, &out)
	r.mu.Lock()
	r.settled = true
	if err == nil {
		r.out = out
	}
	r.mu.Unlock()
	if err != nil {
		select {
		case <-r.stop:
			return outcome.Result{StopReason: outcome.StopAborted}
		default:
		}
		r.e.logf("temporal workflow %s: %v", r.id, err)
		return Failure(err, r.provider)
	}
	if out.WorkerSession != "" {
		r.e.logf("temporal workflow %s: the child's log is under worker session %s", r.id, out.WorkerSession)
	}
	return outcome.Settle(out.Result)
}

// Cancel cancels the workflow: Temporal cancels the activity, the worker's
// child ends aborted through its own teardown.
func (r *run) Cancel() {
	r.cancelOnce.Do(func() {
		close(r.stop)
		ctx, cancel := context.WithTimeout(context.Background(), cancelRPC)
		defer cancel()
		if err := r.e.Client.CancelWorkflow(ctx, r.id, r.runID); err != nil {
			r.e.logf("temporal workflow %s cancel: %v", r.id, err)
		}
	})
}

// Dispose cancels a run nobody waited for to its end; a settled run has
// nothing to release here.
func (r *run) Dispose() error {
	r.mu.Lock()
	settled := r.settled
	r.mu.Unlock()
	if !settled {
		r.Cancel()
	}
	return nil
}
