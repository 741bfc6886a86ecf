package temporal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/engine/remote"
	"github.com/reinsdev/reins/internal/engine/wire"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/subagent"
)

// Bounds of the parent's side.
const (
	// StartTimeout bounds submitting a run to the cluster.
	StartTimeout = 30 * time.Second
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
	// Grace is how long a cancelled run's own result is waited for before
	// it is settled here from its last heartbeat (subagents.cancelGrace;
	// 0: remote.DefaultGrace).
	Grace time.Duration
	Logf  func(format string, args ...any)
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
	r := &run{e: e, id: id, runID: wr.GetRunID(), wr: wr, provider: t.Provider}
	r.rem = remote.New(far{e, id, r.runID}, remote.Options{Provider: t.Provider, Timeout: t.Timeout, Grace: e.Grace})
	return r, nil
}

type run struct {
	e        *Engine
	id       string
	runID    string
	wr       client.WorkflowRun
	provider string
	rem      *remote.Run

	mu         sync.Mutex
	out        Outcome // once settled
	onSpent    func(wire.Spent)
	onProgress func([]llm.Block, string)
}

// Outcome is the settled run's outcome beyond its Result (the child's
// session on the worker, its conversation, its spend), known once Wait
// returned; zero before, and zero for a run settled here.
func (r *run) Outcome() Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out
}

// Watch sets what Wait calls as the worker heartbeats the child: spent
// with the child tree's spend when it grew (how a budget is charged live
// across workers), progress with its current selection when it changed.
// Either may be nil. It is called before Wait.
func (r *run) Watch(spent func(wire.Spent), progress func([]llm.Block, string)) {
	r.mu.Lock()
	r.onSpent, r.onProgress = spent, progress
	r.mu.Unlock()
}

// watch reads the activity's heartbeat details every period until ctx
// ends: the child's spend and selection (wire.Beat).
func (r *run) watch(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	var last wire.Spent
	var lastOut string
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
			var b wire.Beat
			if a.GetHeartbeatDetails() == nil || converter.GetDefaultDataConverter().FromPayloads(a.GetHeartbeatDetails(), &b) != nil {
				continue
			}
			r.rem.Progress(b.Output, b.WorkerSession)
			r.mu.Lock()
			spent, progress := r.onSpent, r.onProgress
			r.mu.Unlock()
			if s := b.Spent; spent != nil && (s.Tokens > last.Tokens || s.USD > last.USD) {
				last = s
				spent(s)
			}
			if k := outKey(b.Output); progress != nil && len(b.Output) > 0 && k != lastOut {
				lastOut = k
				progress(b.Output, b.WorkerSession)
			}
		}
	}
}

func outKey(out []llm.Block) string {
	b, _ := json.Marshal(out)
	return string(b)
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

// Wait waits for the workflow's one result under remote.Run's deadlines:
// the agent's timeout and ctx's end cancel the workflow, whose result is
// waited for at most the cancel grace; then the run is settled here from
// the child's last heartbeat and the workflow terminated.
func (r *run) Wait(ctx context.Context) outcome.Result {
	gctx, gcancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer gcancel()
	wg.Add(2)
	go func() {
		defer wg.Done()
		// As often as the worker beats: one describe a running run every
		// 2 s (a run shorter than that costs the cluster none).
		r.watch(gctx, HeartbeatEvery)
	}()
	go func() {
		defer wg.Done()
		var out Outcome
		err := r.wr.Get(gctx, &out)
		if gctx.Err() != nil {
			return // settled here
		}
		if err != nil {
			if r.rem.Cancelled() {
				// Any error after a cancel is the cancel's: aborted,
				// with the child's last heartbeat (remote.Run's fold).
				r.rem.Deliver(outcome.Result{StopReason: outcome.StopAborted})
				return
			}
			r.e.logf("temporal workflow %s: %v", r.id, err)
			r.rem.Deliver(Failure(err, r.provider))
			return
		}
		r.mu.Lock()
		r.out = out
		r.mu.Unlock()
		if out.WorkerSession != "" {
			r.e.logf("temporal workflow %s: the child's log is under worker session %s", r.id, out.WorkerSession)
		}
		r.rem.Deliver(out.Result)
	}()
	return r.rem.Wait(ctx)
}

// Cancel cancels the workflow: Temporal cancels the activity, the worker's
// child ends aborted through its own teardown; the grace bounds the wait.
func (r *run) Cancel() { r.rem.Cancel() }

// Dispose cancels a run nobody waited for to its end; a settled run has
// nothing to release here.
func (r *run) Dispose() error { return r.rem.Dispose() }

// far is the cluster's side of a run.
type far struct {
	e         *Engine
	id, runID string
}

func (f far) Cancel() {
	ctx, cancel := context.WithTimeout(context.Background(), cancelRPC)
	defer cancel()
	if err := f.e.Client.CancelWorkflow(ctx, f.id, f.runID); err != nil {
		f.e.logf("temporal workflow %s cancel: %v", f.id, err)
	}
}

// Terminate ends the workflow the parent settled by itself: a worker
// that comes back finds its activity gone, and no retry starts.
func (f far) Terminate() {
	ctx, cancel := context.WithTimeout(context.Background(), cancelRPC)
	defer cancel()
	if err := f.e.Client.TerminateWorkflow(ctx, f.id, f.runID, "reins: the parent settled the run after its cancel grace"); err != nil {
		f.e.logf("temporal workflow %s terminate: %v", f.id, err)
	}
}

// Terminate ends the workflow at once (the parent settled it already).
func (r *run) Terminate() { far{r.e, r.id, r.runID}.Terminate() }
