// Package reinschild is the `reins` subagent provider: a child that is
// another reins, run as `reins sdk` (docs/sdk-protocol.md) through the public sdk
// client. The child's session/events are folded with the one output rule,
// its last turn/end becomes the stop reason, and every failure becomes a
// fixed diagnostic line (docs/subagents.md) derived from closed facts only: typed sdk
// errors, the child's closed turn-end reason, the observed exit code and
// signal. Raw causes — error messages, the child's stderr, payloads — go to
// the host log and nowhere else.
package reinschild

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/proc"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/childproc"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/helperbin"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/sdk"
)

// DefaultRequestTimeout bounds the initialize handshake and the prompt
// receipt: a runtime that does not answer those is not going to work.
const DefaultRequestTimeout = time.Minute

// Options configure the provider.
type Options struct {
	// Command is the runtime executable when the agent definition names
	// none; empty means the running reins executable.
	Command string
	// Args are the runtime's arguments when the agent definition gives
	// none; nil means ["sdk"].
	Args []string
	// Model is the parent's PROVIDER/MODEL, the child's model when its
	// agent definition names none; BaseURL the parent's --base-url, passed
	// when the child's model is on the parent's provider.
	Model   string
	BaseURL string
	// Logf is the host log: the one place raw causes go.
	Logf func(format string, args ...any)

	// Timing; zero values mean the sdk client's defaults (RequestTimeout:
	// DefaultRequestTimeout).
	RequestTimeout  time.Duration
	ShutdownTimeout time.Duration
	// StartTimeout bounds the whole start (spawn, initialize, prompt
	// receipt); zero means config.DefaultStartTimeout
	// (subagents.startTimeout).
	StartTimeout  time.Duration
	CancelGrace   time.Duration
	TeardownGrace time.Duration
	TeardownTerm  time.Duration
}

// New returns the provider.
func New(o Options) subagent.Provider { return &provider{o: o} }

type provider struct{ o Options }

func (p *provider) logf(format string, args ...any) {
	if p.o.Logf != nil {
		p.o.Logf(format, args...)
	}
}

// errStartTimeout is the cause of a start that outlived its deadline.
var errStartTimeout = errors.New("reins subagent: start deadline passed")

// diag is a reins-provider diagnostic.
func diag(stage outcome.Stage, category outcome.Category, stop outcome.StopReason) outcome.Diagnostic {
	return outcome.Diagnostic{Provider: config.ProviderReins, Stage: stage, Category: category, StopReason: stop}
}

// shutdownFact is the fixed line of a cleanup that could not be confirmed.
var shutdownFact = diag(outcome.StageShutdown, outcome.CategoryUnknown, outcome.StopError)

// classify maps an error of the sdk client to a diagnostic of stage: typed
// errors only, never their text. A transport failure carries the observed
// exit code or signal.
func classify(stage outcome.Stage, err error) outcome.Diagnostic {
	d := diag(stage, outcome.CategoryUnknown, outcome.StopError)
	var (
		spawn     *sdk.SpawnError
		transport *sdk.TransportClosedError
		protocol  *sdk.ProtocolError
	)
	switch {
	case errors.As(err, &spawn) && stage == outcome.StageInitialize:
		d.Category = outcome.CategoryConfiguration
	case errors.As(err, &transport):
		d.Category = outcome.CategoryTransport
		if transport.Exited {
			if transport.Signal != "" {
				d.Signal = transport.Signal
			} else {
				code := transport.ExitCode
				d.ExitCode = &code
			}
		}
	case errors.As(err, &protocol):
		d.Category = outcome.CategoryProtocol
	}
	return d
}

// hostDetail is what the host log gets beyond err.Error(): the untrusted
// text the typed errors keep in fields.
func hostDetail(err error) string {
	var parts []string
	var transport *sdk.TransportClosedError
	if errors.As(err, &transport) && transport.Stderr != "" {
		parts = append(parts, fmt.Sprintf("stderr tail: %q", transport.Stderr))
	}
	var protocol *sdk.ProtocolError
	if errors.As(err, &protocol) && protocol.Message != "" {
		parts = append(parts, fmt.Sprintf("runtime message: %q", protocol.Message))
	}
	return strings.Join(parts, "; ")
}

// startError is a failed start: its diagnostic (left out when the caller
// cancelled the start) plus the shutdown fact when rolling back could not
// be confirmed.
func (p *provider) startError(ctx context.Context, req subagent.Request, d outcome.Diagnostic, err error, cleanupFailed bool) error {
	p.logf("reins subagent %s (%s) failed to start: %v %s", req.RunID, req.Agent.Name, err, hostDetail(err))
	var lines []string
	if ctx.Err() == nil {
		lines = append(lines, d.String())
	}
	if cleanupFailed {
		lines = append(lines, shutdownFact.String())
	}
	return &subagent.StartError{Diagnostic: strings.Join(lines, "\n"), Err: err}
}

// Start launches `reins sdk`, initializes it and sends the task; the run is
// published once the child has accepted it. A failed start has torn down
// what it started.
func (p *provider) Start(ctx context.Context, req subagent.Request) (subagent.Run, error) {
	ag := req.Agent
	// The agent's timeout covers the whole run from here, and the start
	// has its own deadline: either cancels the start with its cause.
	life := childproc.Start(ag.Timeout, agent.ErrAbortedByTimeout)
	startCtx, startCancel := context.WithCancelCause(ctx)
	defer startCancel(nil)
	startTimeout := cmp.Or(p.o.StartTimeout, config.DefaultStartTimeout)
	defer time.AfterFunc(startTimeout, func() { startCancel(errStartTimeout) }).Stop()
	defer context.AfterFunc(life.Context(), func() { startCancel(life.Cause()) })()
	published := false
	defer func() {
		if !published {
			life.Abandon()
		}
	}()
	timedOut := func(stage outcome.Stage, err error, cleanupFailed bool) (error, bool) {
		cause := context.Cause(startCtx)
		if ctx.Err() != nil || !(errors.Is(cause, errStartTimeout) || errors.Is(cause, agent.ErrAbortedByTimeout)) {
			return nil, false
		}
		stop := outcome.StopError
		if errors.Is(cause, agent.ErrAbortedByTimeout) {
			stop = outcome.StopAborted
		}
		serr := p.startError(ctx, req, diag(stage, outcome.CategoryTimeout, stop), err, cleanupFailed).(*subagent.StartError)
		serr.StopReason = stop
		return serr, true
	}
	configErr := func(err error) error {
		return p.startError(ctx, req, diag(outcome.StageInitialize, outcome.CategoryConfiguration, outcome.StopError), err, false)
	}
	if fi, err := os.Stat(req.Cwd); err != nil || !fi.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return nil, configErr(fmt.Errorf("workspace %s: %w", req.Cwd, err))
	}
	command, args := ag.Command, ag.Args
	if command == "" {
		command = p.o.Command
	}
	if command == "" {
		exe, err := helperbin.Reins() // reins itself, also from reins-tui
		if err != nil {
			return nil, configErr(fmt.Errorf("locating the reins executable: %w", err))
		}
		command = exe
	}
	if len(args) == 0 {
		args = p.o.Args
	}
	if args == nil {
		args = []string{"sdk"}
	}
	model, base := ag.Model, ""
	if model == "" {
		model = p.o.Model
	}
	if model != "" && p.o.Model != "" && providerOf(model) == providerOf(p.o.Model) {
		base = p.o.BaseURL
	}
	reqTimeout := p.o.RequestTimeout
	if reqTimeout == 0 {
		reqTimeout = DefaultRequestTimeout
	}
	// The runtime runs under the sandbox supervisor like every child.
	sb := req.ChildPolicy(subagent.KeyEnv(model))
	sb.TermGrace = cmp.Or(p.o.TeardownTerm, proc.DefaultLadder.Term) / 2
	env := childproc.Environ(os.Environ(), req.TraceEnv(ag.Env))
	home := config.Home(envLookup(env))
	sb.State = config.StateDirs(home)
	// The child is reins: it reads its own configuration, agents and trust
	// list (its tools are confined again by its own supervisor).
	for _, f := range []string{"config.yaml", "agents", "trusted.json"} {
		sb.Readable = append(slices.Clip(sb.Readable), filepath.Join(home, f))
	}
	for _, d := range sb.State {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, configErr(fmt.Errorf("reins state directory: %w", err))
		}
	}
	// The agent's own PATH (env: {PATH}) finds its command, as for pi.
	command, err := childproc.LookPath(command, env)
	if err == nil {
		command, args, err = sandbox.Argv(sb, command, args...)
	}
	if err != nil {
		return nil, p.startError(ctx, req, diag(outcome.StageInitialize, outcome.CategoryConfiguration, outcome.StopError), err, false)
	}
	route := &route{}
	route.set(life, newForwarder(subagent.NewTap(req), req.Budget))
	client, err := sdk.Start(startCtx, sdk.Options{
		Command: command, Args: args, Env: env, Dir: req.Cwd,
		Initialize: sdk.InitializeParams{
			Cwd: req.Cwd, Model: model, MaxTokens: req.MaxTokens, MaxSteps: req.MaxSteps, BaseURL: base,
			Permission: string(req.Permission), SystemPrompt: ag.SystemPrompt, Tools: req.Tools,
			ParentSession: req.ParentSession, DelegationDepth: req.Depth,
			Budget: remoteBudget(req),
		},
		RequestTimeout: reqTimeout, ShutdownTimeout: p.o.ShutdownTimeout, CancelGrace: p.o.CancelGrace,
		TeardownGrace: p.o.TeardownGrace, TeardownTerm: p.o.TeardownTerm,
		Logf: p.o.Logf,
		// Any notification shows the child is alive (its stall watch).
		OnNotification: route.notify,
	})
	if err != nil {
		if terr, ok := timedOut(outcome.StageInitialize, err, errors.Is(err, sdk.ErrNotQuiescent)); ok {
			return nil, terr
		}
		return nil, p.startError(ctx, req, classify(outcome.StageInitialize, err), err, errors.Is(err, sdk.ErrNotQuiescent))
	}
	// A continuation after the child's idle teardown prompts its session
	// by id: the new runtime loads it from its log (docs/sdk-protocol.md).
	// What the log holds before the prompt is earlier runs'.
	logBase := lastSeq(home, req.ChildSession)
	pending, err := client.Prompt(startCtx, req.ChildSession, []sdk.Block{{Type: "text", Text: req.Prompt}})
	if err != nil {
		cerr := client.Close()
		if cerr != nil {
			p.logf("reins subagent %s: rollback: %v", req.RunID, cerr)
		}
		if terr, ok := timedOut(outcome.StageSessionRun, err, cerr != nil); ok {
			return nil, terr
		}
		return nil, p.startError(ctx, req, classify(outcome.StageSessionRun, err), err, cerr != nil)
	}
	r := &run{p: p, req: req, client: client, pending: pending, home: home, base: logBase, life: life, route: route}
	published = true
	life.WatchStall(req.StallTimeout, req.OnStall)
	life.Go(func() { r.res, r.err = pending.Wait(life.Context()) })
	return r, nil
}

// remoteBudget is what is left of the run's budget, for the child to
// enforce on its side too (nil: no budget).
func remoteBudget(req subagent.Request) *sdk.Budget {
	l := req.Budget.Remaining()
	if l.IsZero() {
		return nil
	}
	b := &sdk.Budget{Tokens: l.Tokens, USD: l.USD}
	if l.Time > 0 {
		b.Time = l.Time.String()
	}
	return b
}

// Continue resumes the child session req.ChildSession in a new runtime,
// which loads it from the child's log, and sends the follow-up.
func (p *provider) Continue(ctx context.Context, req subagent.Request) (subagent.Run, error) {
	if req.ChildSession == "" {
		return nil, &subagent.StartError{Err: subagent.ErrNotContinuable}
	}
	return p.Start(ctx, req)
}

// Again sends the follow-up to the same session of the kept runtime; the
// new run owns the runtime from here.
func (r *run) Again(ctx context.Context, req subagent.Request) (subagent.Run, error) {
	<-r.life.Done()
	r.life.End(nil)
	if r.err != nil || r.pending == nil || r.pending.SessionID == "" {
		return nil, errors.New("reins subagent: the kept runtime is gone")
	}
	life := childproc.Start(req.Agent.Timeout, agent.ErrAbortedByTimeout)
	startCtx, cancel := context.WithTimeout(ctx, cmp.Or(r.p.o.StartTimeout, config.DefaultStartTimeout))
	defer cancel()
	base := lastSeq(r.home, r.pending.SessionID)
	pending, err := r.client.Prompt(startCtx, r.pending.SessionID, []sdk.Block{{Type: "text", Text: req.Prompt}})
	if err != nil {
		life.Abandon()
		r.p.logf("reins subagent %s: the kept runtime refused the follow-up: %v", req.RunID, err)
		return nil, err
	}
	n := &run{p: r.p, req: req, client: r.client, pending: pending, home: r.home, base: base, life: life, route: r.route}
	r.route.set(life, newForwarder(subagent.NewTap(req), req.Budget))
	life.WatchStall(req.StallTimeout, req.OnStall)
	life.Go(func() { n.res, n.err = pending.Wait(life.Context()) })
	return n, nil
}

func providerOf(spec string) string {
	prov, _, _ := strings.Cut(spec, "/")
	return prov
}

type run struct {
	p       *provider
	req     subagent.Request
	client  *sdk.Client
	pending *sdk.Pending
	// home is the child's REINS_HOME: where its own session log is.
	home string
	// base is the last seq the child's log held before this run's prompt
	// (a continuation's earlier runs); 0 for a new session.
	base int64

	life  *childproc.Lifetime
	route *route      // where the runtime's notifications go: the run that owns it now
	res   *sdk.Result // res and err are set when the run settled
	err   error
}

// route sends a kept runtime's notifications to the run that owns it now
// (a continuation takes it over, Again): any notification shows that run
// alive (its stall watch), and its events reach that run's tap and budget.
type route struct {
	mu   sync.Mutex
	life *childproc.Lifetime
	fwd  *forwarder
}

func (rt *route) set(life *childproc.Lifetime, fwd *forwarder) {
	rt.mu.Lock()
	rt.life, rt.fwd = life, fwd
	rt.mu.Unlock()
}

func (rt *route) notify(method string, params json.RawMessage) {
	rt.mu.Lock()
	life, fwd := rt.life, rt.fwd
	rt.mu.Unlock()
	life.Progress()
	fwd.notify(method, params)
}

func (r *run) Session() string { return r.pending.SessionID }

// Pid leads the child's process tree (the sandbox supervisor and the
// reins runtime below it): /jobs shows a kept child's memory
// (subagent.Pider), as for an ACP child.
func (r *run) Pid() int { return r.client.Pid() }

func (r *run) Wait(ctx context.Context) outcome.Result {
	r.life.Wait(ctx, agent.ErrAbortedByParent)
	return r.settle()
}

func (r *run) Cancel() { r.life.End(agent.ErrAbortedByUser) }

// Stalled reports that the child was stopped for sending nothing for
// subagents.stallTimeout (subagent.Staller).
func (r *run) Stalled() bool { return r.life.Stalled() }

// ChargesBudget says the run charged its budget as the child's usage
// arrived (subagent.SelfCharging): the manager must not charge it again.
func (r *run) ChargesBudget() bool { return r.req.Budget != nil }

// Dispose cancels the run if it is still going and tears the runtime down
// (shutdown request, then the ladder). Its error is for the host log.
func (r *run) Dispose() error {
	return r.life.Dispose(agent.ErrAbortedByParent, r.client.Close)
}

// Turn-end reasons a reins child may report beyond docs/events.md's own: a
// runtime that disposed of its session mid-turn.
const (
	reasonDisposed session.EndReason = "disposed"
	byDisposed                       = "disposed"
)

// settle turns what the child said into a Result.
func (r *run) settle() outcome.Result {
	events := r.res.Events
	var (
		fold  outcome.Fold
		usage llm.Usage
		end   *session.TurnEnd
	)
	for _, e := range events {
		se, err := session.NewEvent(e.Type, e.Seq, e.Time, e.Data)
		if err != nil {
			if e.Type == session.TypeTurnEnd {
				end = &session.TurnEnd{} // no reason we know: child-unknown
			}
			continue
		}
		fold.Push(se)
		switch d := se.Payload.(type) {
		case session.TurnEnd:
			end = &d
			if d.Usage != nil {
				usage = usage.Add(*d.Usage)
			}
		case session.SubagentEnd:
			if d.Usage != nil {
				usage = usage.Add(*d.Usage)
			}
		}
	}
	res := outcome.Result{Output: fold.Collect(), Usage: usage}
	if r.err != nil {
		// The child died or its pipe broke: what it streamed may not all
		// have reached us, but it wrote every event before streaming it
		// (write-through), so its own log is the truth. Fold that, so the
		// parent's subagent/end and the child's log agree.
		if out, ok := r.foldChildLog(); ok {
			res.Output = out
		}
	}
	var cause error
	if r.life.Context().Err() != nil {
		cause = r.life.Cause()
	}
	timedOut := errors.Is(cause, agent.ErrAbortedByTimeout)
	aborted := func() outcome.Result {
		res.StopReason = outcome.StopAborted
		if timedOut {
			res.Diagnostic = diag(outcome.StageSessionRun, outcome.CategoryTimeout, outcome.StopAborted).String()
		}
		return res
	}
	fail := func(category outcome.Category) outcome.Result {
		res.StopReason = outcome.StopError
		res.Diagnostic = diag(outcome.StageSessionRun, category, outcome.StopError).String()
		return res
	}
	if r.err != nil {
		if cause != nil {
			return aborted()
		}
		r.p.logf("reins subagent %s (%s): %v %s", r.req.RunID, r.req.Agent.Name, r.err, hostDetail(r.err))
		res.StopReason = outcome.StopError
		res.Diagnostic = classify(outcome.StageSessionRun, r.err).String()
		return res
	}
	if end == nil {
		return fail(outcome.CategoryMissingTerminal)
	}
	if end.Reason == reasonDisposed {
		return fail(outcome.CategoryChildDisposed)
	}
	if _, known := session.ParseEndReason(string(end.Reason)); !known {
		r.p.logf("reins subagent %s (%s): unknown child turn-end reason %q", r.req.RunID, r.req.Agent.Name, end.Reason)
		return fail(outcome.CategoryChildUnknown)
	}
	switch res.StopReason = outcome.StopReasonOf(end.Reason); res.StopReason {
	case outcome.StopAborted:
		if end.By == byDisposed {
			res.Diagnostic = diag(outcome.StageSessionRun, outcome.CategoryChildDisposed, outcome.StopAborted).String()
			return res
		}
		return aborted()
	case outcome.StopError:
		return fail(outcome.CategoryChildError)
	}
	return res
}

// foldChildLog folds the child's own session log, when it can be read and
// holds at least what was streamed to us.
func (r *run) foldChildLog() ([]llm.Block, bool) {
	sid := ""
	if r.pending != nil {
		sid = r.pending.SessionID
	}
	path, ok := childLog(r.home, sid)
	if !ok {
		return nil, false
	}
	ld, err := session.Load(path)
	if err != nil {
		r.p.logf("reins subagent %s (%s): reading the child's log: %v", r.req.RunID, r.req.Agent.Name, err)
		return nil, false
	}
	// This run's events only: a continuation's log also holds the earlier
	// runs, whose answer is not this run's.
	var fold outcome.Fold
	for _, e := range ld.Events {
		if e.Seq > r.base {
			fold.Push(e)
		}
	}
	// A log that holds nothing of this run (the child died before it wrote
	// any) is behind what was streamed: the streamed text stands.
	out := fold.Collect()
	return out, out != nil
}

// childLog is the path of child session sid's log under home, when sid
// is a plain name.
func childLog(home, sid string) (string, bool) {
	if sid == "" || home == "" || strings.ContainsAny(sid, `/\`) || sid == "." || sid == ".." {
		return "", false
	}
	return filepath.Join(home, "sessions", sid, session.FileName), true
}

// lastSeq is the last seq in child session sid's log, 0 when there is
// none (a new session) or it cannot be read (the fold then takes all).
func lastSeq(home, sid string) int64 {
	path, ok := childLog(home, sid)
	if !ok {
		return 0
	}
	ld, err := session.Load(path)
	if err != nil || len(ld.Events) == 0 {
		return 0
	}
	return ld.Events[len(ld.Events)-1].Seq
}

// envLookup reads a variable from an environment list (the last wins, as
// for exec).
func envLookup(env []string) func(string) string {
	return func(key string) string {
		v := ""
		for _, kv := range env {
			if k, val, ok := strings.Cut(kv, "="); ok && k == key {
				v = val
			}
		}
		return v
	}
}
