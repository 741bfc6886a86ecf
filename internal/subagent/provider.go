package subagent

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tool"
)

// Request is one delegation, as a provider sees it.
type Request struct {
	RunID string
	// ChildID names the child across its runs (ChildID, the child: line).
	ChildID string
	// Continues is the child id a continuation continues (empty for a new
	// child) and ChildSession the child's session a cold resume loads
	// (Continuer).
	Continues    string
	ChildSession string
	// Fork is the parent's conversation so far, for a fork child (the
	// subagent tool's fork: true; in-process only): the events its own log
	// starts with, and so its history.
	Fork   []session.Event
	Agent  *config.Agent
	Prompt string
	// Label is the call's description (subagent/start's label): how a
	// question the child asks names it ("child general: review the docs").
	Label string
	// ParentSession and Depth place the child: Depth is the child's own
	// delegation depth (the root is 0).
	ParentSession string
	Depth         int
	// Cwd and Permission are inherited from the parent: Permission is at
	// most the parent's mode (Manager.request), never wider.
	Cwd        string
	Permission tool.Permission
	// Tools is the child's tool allowlist, ChildTools of the parent's
	// effective tools and the agent file's; nil means every tool (neither
	// side has a list). A provider that cannot enforce a list inside a
	// foreign agent says so in README.md's Subagents section.
	Tools []string
	// MaxSteps and MaxTokens are the parent's limits (steps per turn,
	// output tokens per model request; 0: the default), passed down to
	// every child that has an equivalent.
	MaxSteps  int
	MaxTokens int
	// Sandbox confines every process the run starts: the parent's mode
	// and workspace, the agent file's writable paths (docs/sandbox.md).
	Sandbox sandbox.Policy
	// Budget is the run's budget: the tree's, inside it the agent file's
	// (nil: none). An in-process child's loop charges it itself; a reins
	// child is given what remains to enforce on its side.
	Budget *budget.Budget
	// StallTimeout stops a running out-of-process child that sent no
	// protocol message for this long (0: never): the provider calls
	// childproc.Lifetime.WatchStall with it and OnStall, and its Run
	// reports Stalled.
	StallTimeout time.Duration
	// OnStall, when set, is told first that the child stalled (a
	// background job's parent gets a notice before the job is stopped).
	OnStall func()
	// Observe, when set, receives the events of an out-of-process child
	// (and of its descendants), mapped to reins's vocabulary (Tap), as
	// they arrive: the live stream of `reins run --stream-json`. It must
	// not block.
	Observe func(session.Header, session.Event)
	// Key names the run across processes (Params.Key); empty: none.
	Key string
	// Trace is the trace context the child continues (trace.go); empty
	// when nothing is traced. traceEnd closes the run's span.
	Trace    TraceContext
	traceEnd func(session string, r outcome.Result)
}

// Staller is a Run that can tell it was stopped because its child stalled
// (subagents.stallTimeout): the manager then settles it aborted with
// category stalled.
type Staller interface {
	Stalled() bool
}

// SelfCharging is a Run that charged its budget with the child's usage
// as it arrived (a reins child reports every response): the manager does
// not charge its settled usage again.
type SelfCharging interface {
	ChargesBudget() bool
}

// Policy is the sandbox policy of the run's processes: Sandbox, with the
// request's cwd as workspace where it names none, and a mode never wider
// than the request's permission.
func (r Request) Policy() sandbox.Policy {
	p := r.Sandbox
	if p.Workspace == "" {
		p.Workspace = r.Cwd
	}
	if p.Mode == "" {
		p.Mode = sandbox.Mode(r.Permission)
	}
	return p.Narrow(sandbox.Mode(r.Permission))
}

// ChildPolicy is Policy for a child process that talks to a model provider
// itself (acp, pi, reins): it keeps the network (its provider must be
// reachable; docs/sandbox.md) and gets exactly the secrets named here —
// its own provider's key variable — and those its agent file's env sets.
func (r Request) ChildPolicy(keyEnv ...string) sandbox.Policy {
	p := r.Policy()
	p.DenyNetwork = r.Agent != nil && r.Agent.NetworkOff
	p.Env.Keep = append(slices.Clip(p.Env.Keep), keyEnv...)
	if r.Agent != nil {
		for k := range r.Agent.Env {
			p.Env.Keep = append(p.Env.Keep, k)
		}
	}
	return p
}

// KeyEnv is the variable holding the key of a model's provider
// ("PROVIDER/MODEL"): the built-in table's, else PROVIDER_API_KEY (pi's and
// most tools' convention), "" without a provider.
func KeyEnv(model string) string {
	prov, _, ok := strings.Cut(model, "/")
	if !ok || prov == "" {
		return ""
	}
	if _, env, _, _ := config.ProviderDefaults(prov); env != "" {
		return env
	}
	return strings.ToUpper(strings.ReplaceAll(prov, "-", "_")) + "_API_KEY"
}

// Provider starts runs of one kind of child (inprocess, acp, reins, pi).
type Provider interface {
	// Start begins a run and returns once it is published: the child is
	// up and has accepted the task. When Start fails, everything it began
	// has been rolled back (processes reaped, files closed) and the error
	// is a *StartError whose diagnostic is safe to show.
	Start(ctx context.Context, req Request) (Run, error)
}

// Engine is where a Manager's children run when not here
// (subagents.engine, docs/engine.md). Start has Provider.Start's contract:
// prov is the provider this process would use, and an engine that runs the
// child elsewhere still settles it into the same Result, with a fixed
// diagnostic (StageEngine, CategoryEngineUnavailable, CategoryWorkerLost)
// for its own failures.
type Engine interface {
	Start(ctx context.Context, req Request, prov Provider) (Run, error)
}

// Run is a published child run.
type Run interface {
	// Session is the child's session id, if it has one.
	Session() string
	// Wait blocks until the run settles. When ctx is cancelled first, the
	// run is cancelled as by its parent, and Wait still returns its
	// settled result. A child-level failure is a Result, never a panic or
	// a Go error.
	Wait(ctx context.Context) outcome.Result
	// Cancel cancels the run locally (job_kill): it settles aborted with
	// no diagnostic.
	Cancel()
	// Dispose releases the child. It is idempotent and returns only when
	// the child is quiescent (for a process: its group is gone). Its error
	// is for the host log; the safe fact is its Diagnostic.
	Dispose() error
}

// StartError is a failed start. Diagnostic is the fixed docs/subagents.md line
// (empty when the failure is the caller's, such as an unknown agent); Err
// is the raw cause, for the host log only.
type StartError struct {
	Diagnostic string
	Err        error
	// Notice is for the user only, never the model or a session event:
	// why a child that died while it started did so, in its own words
	// (the last line of its stderr, escaped and cut) and where the host
	// log is. Manager.Notify shows it.
	Notice string
	// StopReason is how the failed start settles; empty means error. A
	// start ended by the agent's own timeout is aborted (docs/subagents.md).
	StopReason outcome.StopReason
}

func (e *StartError) Error() string {
	if e.Diagnostic != "" {
		return e.Diagnostic
	}
	return "subagent could not start"
}

func (e *StartError) Unwrap() error { return e.Err }

// ErrNoProvider is a start for a provider this process does not offer.
var ErrNoProvider = errors.New("subagent provider not available")
