// Package mcpserve is `reins mcp serve` (docs/mcp-server.md): reins as an
// MCP server on stdio whose tools delegate to reins's children, so that an
// MCP client (Claude Code, Codex, Cursor, …) gets a child's honest result —
// the result contract in structuredContent, isError whenever the stop
// reason is not completed — without a reins parent.
//
// It runs no child of its own making: every call is one child run of a
// server session (one per workspace, model, effort and mode; origin
// session.OriginMCPServe, as a batch's session holds its tasks), through
// that session's subagent.Manager — its providers, teardown ladder,
// budgets, stall detection and output paging. What this package adds is
// the protocol: the tools, the wait that turns a long call into a job, a
// FIFO queue of subagents.maxParallel across the whole server, progress
// notifications and cancellation.
//
// It links the MCP Go SDK, so only reins-extra may import it
// (internal/importrules: the reins binary links no MCP SDK).
package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/tool"
)

// MaxWait is the longest a tool call blocks: below the 60 s request
// timeout MCP clients commonly use. A foreground run still going then
// becomes a job the caller polls with job_output.
const MaxWait = 50 * time.Second

// maxPlaces bounds the server sessions (distinct workspace, model, effort
// and mode) one server holds open.
const maxPlaces = 32

// Options are what the server is made with: the command's flags, the
// harness of its workspace, its engine and its budget.
type Options struct {
	// Base is the harness of the server's workspace, which the caller
	// opened and closes; Harness is what another workspace's (a call's
	// narrower cwd) or another effort's harness is opened with.
	Base    *harness.Harness
	Harness harness.Options
	// Model and BaseURL are the default model of every call.
	Model, BaseURL      string
	MaxSteps, MaxTokens int
	// Permission is the server's mode: the most a call may ask for.
	Permission tool.Permission
	Engine     subagent.Engine
	// Budget bounds the server's whole lifetime: every call's child
	// charges it.
	Budget *budget.Budget
	// Version is reins's, told to the client.
	Version string
	// MaxWait overrides MaxWait (tests); zero: MaxWait.
	MaxWait time.Duration
}

// Server is one `reins mcp serve`.
type Server struct {
	o       Options
	maxWait time.Duration
	queue   *fifo

	ctx    context.Context // the server's lifetime: every call's run
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup // running calls

	mu       sync.Mutex
	places   map[placeKey]*place
	children map[string]*place // child id -> the place that ran it
	jobs     map[string]*call
	jobOrder []string // job ids, oldest first
	jobSeq   int
	callSeq  int
	// elicits: the client declared form elicitation (elicit.go).
	elicits bool
	// parked are the calls that returned an input-required result, by
	// requestState, and their order (oldest first).
	parked    map[string]*parked
	parkOrder []string

	// observed are the places whose calls' events observe routes.
	obsMu    sync.RWMutex
	observed []*place
}

// New is a server; Serve runs it.
func New(o Options) *Server {
	n := o.Base.Config.Subagents.MaxParallel
	if n <= 0 {
		n = config.DefaultMaxParallel
	}
	s := &Server{o: o, maxWait: MaxWait, queue: &fifo{n: n},
		places: map[placeKey]*place{}, children: map[string]*place{}, jobs: map[string]*call{}, parked: map[string]*parked{}}
	if o.MaxWait > 0 {
		s.maxWait = o.MaxWait
	}
	s.observeOn(o.Base)
	return s
}

// ErrEOF is why the server's children are cancelled when its client went
// away: the end of stdin.
var ErrEOF = errors.New("the MCP client closed stdin")

// Serve speaks MCP on in and out until in ends (or ctx is done); then it
// tears down every child by the usual ladder, closes its sessions and
// returns. Nothing it started outlives it.
func (s *Server) Serve(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	return s.serve(ctx, &mcp.IOTransport{Reader: in, Writer: out})
}

func (s *Server) serve(ctx context.Context, t mcp.Transport) error {
	s.ctx, s.cancel = context.WithCancelCause(context.Background())
	srv := mcp.NewServer(&mcp.Implementation{Name: "reins", Title: "reins", Version: s.o.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       slog.New(slog.DiscardHandler),
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	s.addTools(srv)
	// A signal (ctx) stops every call's child first: the SDK's Run then
	// waits for the calls in flight, which end with their children.
	stop := context.AfterFunc(ctx, func() { s.cancel(agent.ErrAbortedByUser) })
	defer stop()
	err := srv.Run(ctx, t)
	cause := ErrEOF
	if ctx.Err() != nil {
		cause = agent.ErrAbortedByUser
	}
	s.Close(cause)
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
		return err
	}
	return nil
}

// Close cancels every running call with cause, waits for each child's
// teardown and closes the server sessions. It is idempotent.
func (s *Server) Close(cause error) {
	if s.cancel != nil {
		s.cancel(cause)
	}
	s.wg.Wait()
	s.mu.Lock()
	places := s.places
	s.places = map[placeKey]*place{}
	s.mu.Unlock()
	for _, p := range places {
		p.close(s.o.Base)
	}
}

const instructions = "reins runs each task you give the run tool as a child agent (any agent definition of the workspace: in-process, Claude Code, Codex, Gemini CLI, …) and returns its honest result: structuredContent.stopReason is completed only when the child finished; otherwise isError is true and diagnostic says why. A call that would take longer than 50 s returns a job id: poll it with job_output. Continue a child with reply; read a cut result with child_output."

// call is one run or reply: a child run of a place's session.
type call struct {
	label string
	place *place
	done  chan struct{}
	// started is closed once the child's id is known (its subagent/start)
	// or the call ended without one.
	started     chan struct{}
	startedOnce sync.Once
	cancel      context.CancelCauseFunc

	mu       sync.Mutex
	child    string // its child id
	session  string // its child session
	activity string // the child's latest activity, for progress
	actSeq   int
	res      outcome.Result
	err      error // the call was refused before anything was published
	job      string
	killed   bool
	// pending are the child's questions nobody was asked yet; asked
	// wakes whoever waits on the call (elicit.go).
	pending []*question
	asked   chan struct{}
}

func (c *call) markStarted() { c.startedOnce.Do(func() { close(c.started) }) }

func (c *call) ids() (child, sess string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.child, c.session
}

// start runs p in pl as a call of its own, under the server's queue and
// lifetime and timeout (0: none); the call's goroutine ends when the
// child settled and was torn down.
func (s *Server) start(pl *place, p subagent.Params, timeout time.Duration) (*call, error) {
	s.mu.Lock()
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		return nil, errors.New("the server is shutting down")
	}
	s.callSeq++
	c := &call{label: fmt.Sprintf("mcp call %d", s.callSeq), place: pl, done: make(chan struct{}), started: make(chan struct{}), asked: make(chan struct{}, 1)}
	s.wg.Add(1)
	s.mu.Unlock()
	p.Description = c.label
	pl.watch(c)
	ctx, cancel := context.WithCancelCause(s.ctx)
	c.cancel = cancel
	go func() {
		defer s.wg.Done()
		defer cancel(nil)
		defer close(c.done)
		defer c.markStarted()
		defer pl.unwatch(c)
		rctx := ctx
		if timeout > 0 {
			var stop context.CancelFunc
			rctx, stop = context.WithTimeoutCause(ctx, timeout, agent.ErrAbortedByTimeout)
			defer stop()
		}
		if err := s.queue.acquire(rctx); err != nil {
			c.mu.Lock()
			c.res = outcome.Settle(outcome.Result{StopReason: outcome.StopAborted})
			c.mu.Unlock()
			return
		}
		defer s.queue.release()
		res, err := pl.sess.Subagents.Run(rctx, p)
		c.mu.Lock()
		c.res, c.err = res, err
		child := c.child
		c.mu.Unlock()
		if child != "" {
			s.mu.Lock()
			s.children[child] = pl
			s.mu.Unlock()
		}
	}()
	return c, nil
}

// kill cancels c as job_kill or a client's cancel does (a local cancel:
// aborted, no diagnostic) and waits for its teardown.
func (c *call) kill() {
	c.mu.Lock()
	c.killed = true
	c.mu.Unlock()
	c.cancel(agent.ErrAbortedByUser)
	<-c.done
	// A child kept alive for a follow-up (subagents.idleTimeout) goes
	// too: a cancelled call leaves no process. A reply resumes it from
	// its log.
	if _, sess := c.ids(); sess != "" {
		c.place.sess.Subagents.Release(sess)
	}
}

// asJob makes c a job the caller polls; its id.
func (s *Server) asJob(c *call) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.job == "" {
		s.jobSeq++
		c.job = fmt.Sprintf("job-%d", s.jobSeq)
		s.jobs[c.job] = c
		s.jobOrder = append(s.jobOrder, c.job)
		s.forgetJobs()
	}
	return c.job
}

// maxJobs bounds the jobs a server remembers: beyond it the oldest
// finished ones are forgotten (their children stay readable by id).
const maxJobs = 256

// forgetJobs drops the oldest finished jobs while more than maxJobs are
// held. s.mu is held.
func (s *Server) forgetJobs() {
	for i := 0; len(s.jobs) > maxJobs && i < len(s.jobOrder); {
		id := s.jobOrder[i]
		select {
		case <-s.jobs[id].done:
			delete(s.jobs, id)
			s.jobOrder = append(s.jobOrder[:i], s.jobOrder[i+1:]...)
		default:
			i++ // still running: kept
		}
	}
}

func (s *Server) job(id string) *call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.jobs[id]
}

// place of a child id: the server session that ran it.
func (s *Server) placeOf(child string) *place {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.children[child]
}

// fifo is the server's parallelism: at most n calls run at once, and the
// ones beyond wait in the order they came.
type fifo struct {
	mu   sync.Mutex
	n    int
	used int
	wait []chan struct{}
}

func (q *fifo) acquire(ctx context.Context) error {
	q.mu.Lock()
	if q.used < q.n && len(q.wait) == 0 {
		q.used++
		q.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	q.wait = append(q.wait, ch)
	q.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		q.mu.Lock()
		defer q.mu.Unlock()
		for i, w := range q.wait {
			if w == ch {
				q.wait = append(q.wait[:i], q.wait[i+1:]...)
				return ctx.Err()
			}
		}
		// Granted while it was being cancelled: hand the slot on.
		q.mu.Unlock()
		q.release()
		q.mu.Lock()
		return ctx.Err()
	}
}

func (q *fifo) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.wait) > 0 {
		ch := q.wait[0]
		q.wait = q.wait[1:]
		close(ch) // the slot passes to the first waiter
		return
	}
	q.used--
}

// rawJSON is a literal JSON value.
func rawJSON(s string) json.RawMessage { return json.RawMessage(s) }
