package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/engine/temporal"
	"github.com/reinsdev/reins/internal/engine/wire"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/spf13/cobra"
)

// newClientCmd is the parent's side of the engine: reins starts it at a
// parent's first temporal child and sends it runs (internal/engine/wire).
func newClientCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var cfg config.Temporal
	var submit time.Duration
	c := &cobra.Command{
		Use:   "client",
		Short: "Submit child runs for reins over stdio (started by reins itself)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger := log.New(stderr, "", 0)
			e, err := temporal.Dial(cfg, logger.Printf)
			if err != nil {
				return &exitError{code: exitFailed, msg: err.Error()}
			}
			defer e.Close()
			e.Submit = submit
			serveClient(cmd.Context(), e, stdin, stdout, logger.Printf)
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&cfg.Address, "address", "", "the cluster's host:port (subagents.temporal.address)")
	fl.StringVar(&cfg.Namespace, "namespace", "", "its namespace")
	fl.StringVar(&cfg.TaskQueue, "task-queue", "", "the workers' task queue")
	fl.DurationVar(&submit, "submit", temporal.StartTimeout, "bound on submitting one run")
	return c
}

// serveClient answers the runs on in until in ends, then returns; the
// runs it submitted go on on the cluster. Every answer is one line on out.
func serveClient(ctx context.Context, e *temporal.Engine, in io.Reader, out io.Writer, logf func(string, ...any)) {
	var wmu sync.Mutex
	send := func(m wire.Msg) {
		b, err := json.Marshal(m)
		if err != nil {
			logf("encode %s %d: %v", m.Op, m.ID, err)
			return
		}
		wmu.Lock()
		defer wmu.Unlock()
		out.Write(append(b, '\n'))
	}
	ctx, cancelAll := context.WithCancel(ctx)
	defer cancelAll()
	var (
		mu      sync.Mutex
		cancels = map[uint64]func(){} // a start's or a run's cancel
	)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), wire.MaxLine)
	for sc.Scan() {
		var m wire.Msg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			logf("a line that is not the protocol (%d bytes)", len(sc.Bytes()))
			continue
		}
		switch m.Op {
		case wire.OpCancel:
			mu.Lock()
			cancel := cancels[m.ID]
			mu.Unlock()
			if cancel != nil {
				cancel()
			}
		case wire.OpStart:
			if m.Task == nil {
				logf("start %d without a task", m.ID)
				continue
			}
			sctx, scancel := context.WithCancel(ctx)
			mu.Lock()
			cancels[m.ID] = scancel
			mu.Unlock()
			go func(id uint64, t wire.Task) {
				defer scancel()
				run, err := e.StartTask(sctx, t)
				if err != nil {
					f := &wire.StartFailure{StopReason: outcome.StopError}
					var se *subagent.StartError
					if errors.As(err, &se) {
						f = &wire.StartFailure{StopReason: se.StopReason, Diagnostic: se.Diagnostic}
						logf("run %s: start: %v", t.RunID, se.Err)
					}
					mu.Lock()
					delete(cancels, id)
					mu.Unlock()
					send(wire.Msg{Op: wire.OpStarted, ID: id, Failed: f})
					return
				}
				mu.Lock()
				cancels[id] = run.Cancel
				mu.Unlock()
				if sctx.Err() != nil {
					run.Cancel() // cancelled while it was being accepted
				}
				send(wire.Msg{Op: wire.OpStarted, ID: id})
				// A budget is charged live: the spend the worker
				// heartbeats goes to reins as it grows.
				wctx, stopWatch := context.WithCancel(ctx)
				if w, ok := run.(interface {
					WatchSpent(context.Context, time.Duration, func(wire.Spent))
				}); ok && t.Budget != nil {
					go w.WatchSpent(wctx, temporal.HeartbeatEvery/2, func(s wire.Spent) {
						send(wire.Msg{Op: wire.OpSpent, ID: id, Spent: &s})
					})
				}
				// Wait's own cancel grace bounds a cancelled run; a run
				// left running when reins goes is the cluster's.
				res := run.Wait(context.Background())
				stopWatch()
				mu.Lock()
				delete(cancels, id)
				mu.Unlock()
				m := wire.Msg{Op: wire.OpResult, ID: id, Result: &res}
				if o, ok := run.(interface{ Outcome() temporal.Outcome }); ok {
					out := o.Outcome()
					m.Session, m.History, m.Spent = out.ChildSession, out.History, out.Spent
				}
				send(m)
			}(m.ID, *m.Task)
		default:
			logf("unknown op %q", m.Op)
		}
	}
	if err := sc.Err(); err != nil {
		logf("stdin: %v", err)
	}
	// reins closed its end: nobody will read an answer. Runs stay on the
	// cluster (like the SDK client's Close); only pending starts end.
	cancelAll()
}
