package temporal

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/reinsdev/reins/internal/config"
)

// Serve runs a worker for cfg's task queue until ctx ends: it executes
// ChildRun workflows and their activities with run, at most parallel
// children at once. It returns an error when the cluster cannot be
// reached or the worker stops by itself. lease, when set, is the fence's
// renewals (RenewLease).
func Serve(ctx context.Context, cfg config.Temporal, parallel int, run RunFunc, lease io.Writer, logf func(string, ...any)) error {
	dctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	c, err := client.DialContext(dctx, client.Options{HostPort: cfg.Address, Namespace: cfg.Namespace, Logger: Logger(logf)})
	if err != nil {
		return fmt.Errorf("temporal cluster %s (namespace %s): %w", cfg.Address, cfg.Namespace, err)
	}
	defer c.Close()
	if lease != nil {
		lctx, stopLease := context.WithCancel(ctx)
		defer stopLease()
		go RenewLease(lctx, c, lease, logf)
	}
	w := NewWorker(c, cfg.TaskQueue, parallel, run)
	stop := make(chan any)
	go func() {
		<-ctx.Done()
		close(stop)
	}()
	return w.Run(stop)
}

// DeadlockBound is how long one workflow task may run before the SDK
// calls it a deadlock. ChildRun's tasks are a few calls each, but the SDK's
// 1 s default fails them on a busy machine (seen at load 30 in the suite);
// a real deadlock still surfaces, only later.
const DeadlockBound = 30 * time.Second

// NewWorker registers the workflow and the activity on a worker of queue.
func NewWorker(c client.Client, queue string, parallel int, run RunFunc) worker.Worker {
	w := worker.New(c, queue, worker.Options{
		MaxConcurrentActivityExecutionSize: max(parallel, 1),
		// Children get time to end through their own teardown.
		WorkerStopTimeout: 10 * time.Second,
		// A heartbeat carries the child's spend (Activities.RunChild):
		// sent every HeartbeatEvery, not throttled to 80% of the
		// heartbeat timeout, so a parent's budget sees it within seconds.
		MaxHeartbeatThrottleInterval: HeartbeatEvery,
		DeadlockDetectionTimeout:     DeadlockBound,
	})
	Register(w, run)
	return w
}

// Register registers ChildRun and the activity under their fixed names.
func Register(r interface {
	RegisterWorkflowWithOptions(any, workflow.RegisterOptions)
	RegisterActivityWithOptions(any, activity.RegisterOptions)
}, run RunFunc) {
	a := &Activities{Run: run}
	r.RegisterWorkflowWithOptions(ChildRun, workflow.RegisterOptions{Name: WorkflowName})
	r.RegisterActivityWithOptions(a.RunChild, activity.RegisterOptions{Name: ActivityName})
}

// Logger is the SDK's logger writing warnings and errors to logf (the
// host log); the SDK's own chatter stays off stdout and stderr.
func Logger(logf func(string, ...any)) log.Logger { return sdkLog{logf} }

type sdkLog struct{ logf func(string, ...any) }

func (l sdkLog) Debug(string, ...any) {}
func (l sdkLog) Info(string, ...any)  {}
func (l sdkLog) Warn(msg string, kv ...any) {
	l.put("warn", msg, kv)
}
func (l sdkLog) Error(msg string, kv ...any) { l.put("error", msg, kv) }

func (l sdkLog) put(level, msg string, kv []any) {
	if l.logf == nil {
		return
	}
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, " %v=%v", kv[i], kv[i+1])
	}
	l.logf("temporal %s: %s%s", level, msg, b.String())
}
