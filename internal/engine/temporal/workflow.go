// Package temporal is the temporal engine (subagents.engine: temporal,
// docs/engine.md): a child run is a Temporal workflow whose one activity
// runs the child on a `reins worker`, heartbeating, under the same result
// contract as a local child. A worker lost mid-run (its heartbeats stop)
// makes Temporal retry the activity on another worker, from scratch; the
// parent waits on the workflow's one result, so it settles exactly once.
package temporal

import (
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/reinsdev/reins/internal/engine/wire"
	"github.com/reinsdev/reins/internal/outcome"
)

// Names registered with Temporal: a worker and a parent of different
// reins builds meet on them.
const (
	WorkflowName = "reins.ChildRun"
	ActivityName = "reins.RunChild"
)

// The activity's timing and retries (docs/engine.md).
const (
	// HeartbeatTimeout is how long a silent worker keeps its run: then the
	// run is retried on another worker. Workers beat every HeartbeatEvery.
	// It is longer than the fence's Lease plus a beat: a frozen worker is
	// dead before its runs are retried (fence.go).
	HeartbeatTimeout = 10 * time.Second
	HeartbeatEvery   = 2 * time.Second
	// MaxAttempts bounds the tries of one run; a run whose workers keep
	// dying settles error, category worker-lost.
	MaxAttempts = 3
	// ScheduleToStart is how long a run waits for a worker to take it
	// before it settles error, category engine-unavailable.
	ScheduleToStart = 5 * time.Minute
	// MaxRunTime bounds one attempt when the agent file sets no timeout.
	MaxRunTime = 24 * time.Hour
)

// ErrTypeConfiguration is the ApplicationError type of a run the worker
// cannot even set up (an unknown agent or workspace on that machine):
// retrying elsewhere would not help, so it is not retried.
const ErrTypeConfiguration = "reins-configuration"

// Task and Outcome are defined in package wire, which reins itself
// imports without the SDK.
type (
	Task    = wire.Task
	Outcome = wire.Outcome
)

// ChildRun is the workflow of one child run: one activity, retried on
// another worker while workers are lost, and a result that is always an
// Outcome — an engine failure is a Result with a fixed diagnostic, never
// a workflow error, so the parent settles exactly once.
func ChildRun(ctx workflow.Context, t Task) (Outcome, error) {
	run := MaxRunTime
	if t.Timeout > 0 {
		// The child ends itself at its timeout (aborted); the margin
		// lets it settle and report.
		run = t.Timeout + time.Minute
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ScheduleToStartTimeout: ScheduleToStart,
		StartToCloseTimeout:    run,
		HeartbeatTimeout:       HeartbeatTimeout,
		// A cancelled run (job_kill, the parent cancelled) still
		// reports the child's own aborted result.
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        10 * time.Second,
			MaximumAttempts:        MaxAttempts,
			NonRetryableErrorTypes: []string{ErrTypeConfiguration},
		},
	})
	var out Outcome
	err := workflow.ExecuteActivity(actx, ActivityName, t).Get(actx, &out)
	if err != nil {
		return Outcome{Result: Failure(err, t.Provider)}, nil
	}
	out.Result = outcome.Settle(out.Result)
	return out, nil
}

// Failure is the settled result of a run the engine could not finish: a
// cancel is aborted with no diagnostic (like a local one); everything else
// is error with a fixed diagnostic of stage engine. The error's text stays
// out of it: it may carry the worker's or the cluster's words.
func Failure(err error, provider string) outcome.Result {
	if temporal.IsCanceledError(err) {
		return outcome.Result{StopReason: outcome.StopAborted}
	}
	cat := outcome.CategoryEngineUnavailable
	var te *temporal.TimeoutError
	var ae *temporal.ApplicationError
	var pe *temporal.PanicError
	switch {
	case errors.As(err, &te):
		switch te.TimeoutType() {
		case enumspb.TIMEOUT_TYPE_HEARTBEAT, enumspb.TIMEOUT_TYPE_START_TO_CLOSE:
			cat = outcome.CategoryWorkerLost
		}
	case errors.As(err, &ae) && ae.Type() == ErrTypeConfiguration:
		cat = outcome.CategoryConfiguration
	case errors.As(err, &ae), errors.As(err, &pe):
		cat = outcome.CategoryUnknown
	}
	if provider == "" {
		provider = "inprocess"
	}
	return outcome.Settle(outcome.Result{
		StopReason: outcome.StopError,
		Diagnostic: outcome.Diagnostic{Provider: provider, Stage: outcome.StageEngine, Category: cat, StopReason: outcome.StopError}.String(),
	})
}
