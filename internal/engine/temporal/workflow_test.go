package temporal

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/reinsdev/reins/internal/engine/remote"
	"github.com/reinsdev/reins/internal/engine/wire"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
)

func text(s string) []llm.Block { return []llm.Block{{Type: llm.BlockText, Text: s}} }

// runWorkflow executes ChildRun in the SDK's test environment (no server)
// with run as the activity's child runner, and returns its outcome.
func runWorkflow(t *testing.T, task Task, run RunFunc, setup func(env *testsuite.TestWorkflowEnvironment)) Outcome {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	// The worker's bound, not the SDK's 1 s: a busy machine is a normal
	// machine (TMPRL1101 "potential deadlock" at load 30 otherwise).
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: DeadlockBound})
	Register(env, run)
	if setup != nil {
		setup(env)
	}
	env.ExecuteWorkflow(WorkflowName, task)
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error %v: an engine failure must be an Outcome", err)
	}
	var out Outcome
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

var task = Task{RunID: "run-1", Agent: "general", Provider: "inprocess", Prompt: "p", Depth: 1, Permission: "workspace-write"}

// Every way a child ends comes back through the workflow unchanged, under
// the contract (Settle): output, stop reason, diagnostic, usage.
func TestChildRunPassesTheResult(t *testing.T) {
	for _, want := range []outcome.Result{
		{StopReason: outcome.StopCompleted, Output: text("done"), Usage: llm.Usage{InputTokens: 10, OutputTokens: 2}},
		{StopReason: outcome.StopMaxTokens, Output: text("partial")},
		{StopReason: outcome.StopError, Diagnostic: "Subagent failure (provider: acp; stage: prompt; category: transport; stop reason: error)"},
		{StopReason: outcome.StopRefusal},
	} {
		t.Run(string(want.StopReason), func(t *testing.T) {
			out := runWorkflow(t, task, func(ctx context.Context, got Task) (Outcome, error) {
				if got.Prompt != task.Prompt || got.Agent != task.Agent {
					t.Errorf("activity got %+v", got)
				}
				return Outcome{Result: want, WorkerSession: "w1"}, nil
			}, nil)
			if out.WorkerSession != "w1" || llm.BlocksText(out.Result.Output) != llm.BlocksText(want.Output) ||
				out.Result.StopReason != want.StopReason || out.Result.Diagnostic != want.Diagnostic || out.Result.Usage != want.Usage {
				t.Errorf("outcome %+v, want %+v", out, want)
			}
		})
	}
}

// A child-written stop reason outside the five, or an overlong
// diagnostic, is settled (error, bounded) before the parent sees it.
func TestChildRunSettles(t *testing.T) {
	out := runWorkflow(t, task, func(context.Context, Task) (Outcome, error) {
		return Outcome{Result: outcome.Result{StopReason: "weird", Diagnostic: strings.Repeat("x", 5000)}}, nil
	}, nil)
	if out.Result.StopReason != outcome.StopError || len(out.Result.Diagnostic) != outcome.MaxDiagnosticBytes {
		t.Errorf("%q, %d bytes", out.Result.StopReason, len(out.Result.Diagnostic))
	}
}

// A worker lost mid-run (its heartbeats stop) is retried on another
// worker; the run settles once, with the retry's result.
func TestChildRunRetriesALostWorker(t *testing.T) {
	var calls atomic.Int32
	out := runWorkflow(t, task, nil, func(env *testsuite.TestWorkflowEnvironment) {
		env.OnActivity(ActivityName, mockAny, mockAny).Return(func(ctx context.Context, _ Task) (Outcome, error) {
			if calls.Add(1) == 1 {
				return Outcome{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil)
			}
			return Outcome{Result: outcome.Result{StopReason: outcome.StopCompleted, Output: text("second worker")}}, nil
		})
	})
	if calls.Load() != 2 || out.Result.StopReason != outcome.StopCompleted || llm.BlocksText(out.Result.Output) != "second worker" {
		t.Errorf("%d attempts, outcome %+v", calls.Load(), out)
	}
}

// Workers that keep dying use up MaxAttempts; the run settles error with
// the fixed worker-lost diagnostic and no worker text.
func TestChildRunWorkerLost(t *testing.T) {
	var calls atomic.Int32
	out := runWorkflow(t, task, nil, func(env *testsuite.TestWorkflowEnvironment) {
		env.OnActivity(ActivityName, mockAny, mockAny).Return(func(ctx context.Context, _ Task) (Outcome, error) {
			calls.Add(1)
			return Outcome{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, errors.New("SECRET worker text"))
		})
	})
	want := "Subagent failure (provider: inprocess; stage: engine; category: worker-lost; stop reason: error)"
	if calls.Load() != MaxAttempts || out.Result.StopReason != outcome.StopError || out.Result.Diagnostic != want {
		t.Errorf("%d attempts, outcome %+v", calls.Load(), out)
	}
}

// A run the worker cannot set up (no such agent there) is not retried: it
// settles at once with category configuration.
func TestChildRunConfigurationNotRetried(t *testing.T) {
	var calls atomic.Int32
	out := runWorkflow(t, Task{Provider: "acp", Depth: 1}, func(context.Context, Task) (Outcome, error) {
		calls.Add(1)
		return Outcome{}, errors.New("no agent SECRET")
	}, nil)
	want := "Subagent failure (provider: acp; stage: engine; category: configuration; stop reason: error)"
	if calls.Load() != 1 || out.Result.Diagnostic != want || strings.Contains(out.Result.Diagnostic, "SECRET") {
		t.Errorf("%d attempts, outcome %+v", calls.Load(), out)
	}
}

// A cancelled workflow (job_kill, the parent cancelled) settles aborted
// with the child's earlier complete message (seed 000), even when the
// child never answers the cancel: the activity heartbeats the child's
// selection as soon as a message completes, and the parent's side
// (remote.Run, as client.go's run drives it) settles from the last beat.
// The SDK's test environment settles the cancel itself before the
// activity sees it — the path of a worker that cannot answer. On the old
// engine the heartbeat carried only the spend, and the outcome had no
// output.
func TestChildRunCancel(t *testing.T) {
	release := make(chan struct{})
	done := make(chan struct{})
	far := &recordFar{}
	rem := remote.New(far, remote.Options{Provider: "inprocess", Grace: time.Hour})
	out := runWorkflow(t, task, func(ctx context.Context, _ Task) (Outcome, error) {
		defer close(done)
		pg := progressOf(ctx)
		// Step 1 completed; step 2 is streaming when the cancel comes.
		pg.Push(session.Event{Type: session.TypeAssistantMessage, Payload: session.AssistantMessage{Step: 1, Message: llm.Message{Role: llm.RoleAssistant, Content: text("half")}}})
		pg.Push(session.Event{Type: session.TypeAssistantChunk, Payload: session.AssistantChunk{Step: 2, Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Delta: "streaming on"}}})
		select {
		case <-ctx.Done():
			return Outcome{Result: outcome.Result{StopReason: outcome.StopAborted, Output: text("half")}}, nil
		case <-release:
			return Outcome{Result: outcome.Result{StopReason: outcome.StopCompleted}}, nil
		}
	}, func(env *testsuite.TestWorkflowEnvironment) {
		var once sync.Once
		env.SetOnActivityHeartbeatListener(func(_ *activity.Info, details converter.EncodedValues) {
			var b wire.Beat
			if details.Get(&b) != nil || len(b.Output) == 0 {
				return
			}
			rem.Progress(b.Output, b.WorkerSession)
			// Cancel once the cluster holds the beat with the message:
			// the verdict does not depend on speed.
			once.Do(func() { env.RegisterDelayedCallback(env.CancelWorkflow, time.Millisecond) })
		})
		env.SetTestTimeout(time.Minute)
	})
	close(release)
	<-done
	rem.Cancel()
	rem.Deliver(out.Result)
	res := rem.Wait(context.Background())
	if res.StopReason != outcome.StopAborted || res.Diagnostic != "" || llm.BlocksText(res.Output) != "half" {
		t.Errorf("settled %+v (workflow outcome %+v), want aborted with the output \"half\" and no diagnostic", res, out)
	}
	if far.terminates.Load() != 0 {
		t.Error("a run that answered was terminated")
	}
}

// recordFar is a far side that records what the parent asked.
type recordFar struct{ cancels, terminates atomic.Int32 }

func (f *recordFar) Cancel()    { f.cancels.Add(1) }
func (f *recordFar) Terminate() { f.terminates.Add(1) }

func TestFailure(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		cat  outcome.Category
	}{
		{"heartbeat", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil), outcome.CategoryWorkerLost},
		{"start to close", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil), outcome.CategoryWorkerLost},
		{"no worker", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil), outcome.CategoryEngineUnavailable},
		{"cluster down", errors.New("dial tcp: connection refused"), outcome.CategoryEngineUnavailable},
		{"configuration", temporal.NewNonRetryableApplicationError("m", ErrTypeConfiguration, nil), outcome.CategoryConfiguration},
		{"other application error", temporal.NewApplicationError("m", "boom"), outcome.CategoryUnknown},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := Failure(tt.err, "pi")
			want := "Subagent failure (provider: pi; stage: engine; category: " + string(tt.cat) + "; stop reason: error)"
			if r.StopReason != outcome.StopError || r.Diagnostic != want {
				t.Errorf("%+v, want %s", r, want)
			}
		})
	}
	if r := Failure(temporal.NewCanceledError(), "pi"); r.StopReason != outcome.StopAborted || r.Diagnostic != "" {
		t.Errorf("cancel: %+v", r)
	}
}

// mockAny matches any argument of a mocked activity.
var mockAny = mock.Anything
