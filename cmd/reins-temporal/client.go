package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/engine/remote"
	"github.com/reinsdev/reins/internal/engine/temporal"
	"github.com/reinsdev/reins/internal/engine/wire"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/spf13/cobra"
)

// newClientCmd is the parent's side of the engine: reins starts it at a
// parent's first temporal child and sends it runs (internal/engine/wire).
func newClientCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var cfg config.Temporal
	var submit, grace time.Duration
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
			e.Submit, e.Grace = submit, grace
			if err := serveClient(cmd.Context(), e, stdin, stdout, logger.Printf); err != nil {
				return &exitError{code: exitFailed, msg: err.Error()}
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&cfg.Address, "address", "", "the cluster's host:port (subagents.temporal.address)")
	fl.StringVar(&cfg.Namespace, "namespace", "", "its namespace")
	fl.StringVar(&cfg.TaskQueue, "task-queue", "", "the workers' task queue")
	fl.DurationVar(&submit, "submit", temporal.StartTimeout, "bound on submitting one run")
	fl.DurationVar(&grace, "cancel-grace", remote.DefaultGrace, "how long a cancelled run's own result is waited for (subagents.cancelGrace)")
	return c
}

// ErrVersion is a peer speaking another protocol version: the one line
// names both.
type ErrVersion struct{ Theirs, Ours int }

func (e *ErrVersion) Error() string {
	if e.Theirs == 0 {
		return fmt.Sprintf("reins speaks no protocol version (an older build); reins-temporal speaks version %d: use the reins-temporal of the same release", e.Ours)
	}
	return fmt.Sprintf("reins speaks protocol version %d, reins-temporal speaks version %d: use the reins-temporal of the same release", e.Theirs, e.Ours)
}

// serveClient answers the runs on in until in ends, then returns; the
// runs it submitted go on on the cluster. Every answer is one line on out.
// The first line each way is the hello: a reins of another protocol
// version is refused (an *ErrVersion), before any run.
func serveClient(ctx context.Context, e *temporal.Engine, in io.Reader, out io.Writer, logf func(string, ...any)) error {
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
	send(wire.Msg{Op: wire.OpHello, Version: wire.ProtocolVersion})
	if !sc.Scan() {
		return sc.Err()
	}
	var hello wire.Msg
	if json.Unmarshal(sc.Bytes(), &hello) != nil || hello.Op != wire.OpHello || hello.Version != wire.ProtocolVersion {
		return &ErrVersion{Theirs: hello.Version, Ours: wire.ProtocolVersion}
	}
	var (
		rmu  sync.Mutex
		runs = map[uint64]interface{ Terminate() }{}
	)
	for sc.Scan() {
		var m wire.Msg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			logf("a line that is not the protocol (%d bytes)", len(sc.Bytes()))
			continue
		}
		switch m.Op {
		case wire.OpTerminate:
			rmu.Lock()
			r := runs[m.ID]
			rmu.Unlock()
			if r != nil {
				go r.Terminate()
			}
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
				// What the worker heartbeats goes to reins as it changes:
				// the spend (a budget is charged live) and the child's
				// selection (reins settles from it when nothing answers).
				if w, ok := run.(interface {
					Watch(func(wire.Spent), func([]llm.Block, string))
				}); ok {
					var spent func(wire.Spent)
					if t.Budget != nil {
						spent = func(s wire.Spent) { send(wire.Msg{Op: wire.OpSpent, ID: id, Spent: &s}) }
					}
					w.Watch(spent, func(o []llm.Block, ws string) {
						send(wire.Msg{Op: wire.OpProgress, ID: id, Output: o, Session: ws})
					})
				}
				if tr, ok := run.(interface{ Terminate() }); ok {
					rmu.Lock()
					runs[id] = tr
					rmu.Unlock()
				}
				// Wait's own deadlines bound a cancelled run; a run left
				// running when reins goes is the cluster's.
				res := run.Wait(context.Background())
				mu.Lock()
				delete(cancels, id)
				mu.Unlock()
				rmu.Lock()
				delete(runs, id)
				rmu.Unlock()
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
	return nil
}
