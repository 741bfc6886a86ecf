// Package wire is what crosses between reins and its Temporal helper
// binary, reins-temporal (docs/engine.md): the child run as a task, its
// settled outcome, and the narrow NDJSON protocol reins drives
// `reins-temporal client` with. It imports no Temporal code, so that
// reins itself never pays the SDK's start-up cost (BENCHMARKS.md,
// "Start-up").
package wire

import (
	"time"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
)

// Task is a child run as it crosses the wire: the request by name, for
// the worker to resolve against its own configuration and keys.
type Task struct {
	RunID         string
	Description   string
	Agent         string
	Provider      string // the agent's provider, for the diagnostic
	Prompt        string
	ParentSession string
	Depth         int
	Cwd           string
	Permission    string
	// Tools is the child's tool allowlist; nil is every tool.
	Tools     []string
	MaxSteps  int
	MaxTokens int
	// Model is the parent's PROVIDER/MODEL, the child's model unless its
	// agent file names one; the worker uses its own key and endpoint.
	Model string
	// DenyNetwork carries a parent's `sandbox: {network: false}` down.
	DenyNetwork bool
	// Timeout is the agent file's timeout (0: none).
	Timeout time.Duration
	// ChildID names the child across its runs; Continues is set on a
	// continuation (the id it continues).
	ChildID   string `json:",omitempty"`
	Continues string `json:",omitempty"`
	// Seed is the conversation the child starts with: the parent's for a
	// fork, the child's own so far for a continuation (the child's log is
	// shipped with the task, so any worker can take it; at most MaxSeed
	// bytes). Empty for a new child.
	Seed []session.Event `json:",omitempty"`
	// Budget is what is left of the parent's budget (budget.Remaining),
	// for the worker to enforce on the child's whole tree; nil: none.
	Budget *budget.Limits `json:",omitempty"`
	// Trace is the W3C trace context of the run's span in the parent: the
	// worker's spans of the run continue it (docs/telemetry.md).
	Trace subagent.TraceContext `json:",omitzero"`
	// Key names the run across reins processes (subagent.Params.Key): the
	// workflow id, so that a `reins batch --resume` re-attaches to the
	// workflow its killed predecessor started.
	Key string `json:",omitempty"`
	// MaxOutput bounds the selected output a heartbeat carries: the
	// parent's subagents.maxResultBytes (0: its default).
	MaxOutput int `json:",omitempty"`
}

// Beat is what a running child's activity heartbeats: its tree's spend
// so far, its current selected output (the one fold's, seed 000's rule;
// at most Task.MaxOutput) and the worker session under which its log
// lies. A parent that must settle the child by itself settles it from the
// last Beat the cluster holds.
type Beat struct {
	Spent         Spent
	Output        []llm.Block `json:",omitempty"`
	WorkerSession string      `json:",omitempty"`
}

// MaxSeed bounds a task's Seed and an outcome's History, in bytes of
// JSON: both travel inside one Temporal payload (2 MiB by default). A
// fork or continuation whose conversation is larger is refused with
// category not-continuable rather than cut.
const MaxSeed = 1 << 20

// SeedSize is the size of events as they travel.
func SeedSize(events []session.Event) int {
	n := 0
	for _, e := range events {
		n += len(e.Data) + len(e.Type) + 64
	}
	return n
}

// Spent is a running child tree's usage so far on its worker, as the
// activity heartbeats it and the parent charges it live.
// Unpriced are the tokens of unknown price among Tokens: the parent
// counts them at its own fallback price (budget.Charge).
type Spent struct {
	Tokens   int     `json:"tokens"`
	USD      float64 `json:"usd"`
	Unpriced int     `json:"unpriced,omitempty"`
}

// Since is the usage spent between before and s, as budget.Charge takes
// it: the priced tokens with their cost, the unpriced ones without (two
// usages; either may be zero).
func (s Spent) Since(before Spent) (priced, unpriced llm.Usage) {
	du := s.Unpriced - before.Unpriced
	dt := s.Tokens - before.Tokens - du
	dusd := s.USD - before.USD
	if dt > 0 || dusd > 0 {
		c := max(dusd, 0)
		priced = llm.Usage{InputTokens: max(dt, 0), CostUSD: &c}
	}
	if du > 0 {
		unpriced = llm.Usage{InputTokens: du}
	}
	return priced, unpriced
}

// Outcome is a settled run: the child's result, the session on the
// worker under which the child's log lies, and the child's own session
// there (empty when the child never started).
type Outcome struct {
	Result        outcome.Result
	WorkerSession string
	ChildSession  string
	// History is the child's conversation after the run (Seed of its
	// next continuation); nil when it did not fit MaxSeed or the child
	// cannot be continued (not in process).
	History []session.Event `json:",omitempty"`
	// Spent is the child tree's whole spend, when its task had a budget:
	// the parent charges what its live reports had not.
	Spent *Spent `json:",omitempty"`
}

// TaskOf is the wire form of req for a parent on model (PROVIDER/MODEL).
func TaskOf(req subagent.Request, model string) Task {
	t := Task{
		RunID: req.RunID, Agent: req.Agent.Name, Provider: req.Agent.Provider, Prompt: req.Prompt,
		ParentSession: req.ParentSession, Depth: req.Depth, Cwd: req.Cwd, Permission: string(req.Permission),
		Tools: req.Tools, MaxSteps: req.MaxSteps, MaxTokens: req.MaxTokens, Model: model,
		DenyNetwork: req.Sandbox.DenyNetwork, Timeout: req.Agent.Timeout, Trace: req.Trace,
		ChildID: req.ChildID, Continues: req.Continues, Seed: req.Fork, Key: req.Key,
	}
	if l := req.Budget.Remaining(); !l.IsZero() {
		t.Budget = &l
	}
	if t.Provider == "" {
		t.Provider = config.ProviderInProcess
	}
	return t
}

// Op is a protocol message's kind.
type Op string

// The protocol of `reins-temporal client`: one JSON Msg per line on its
// stdin (reins's requests) and stdout (its answers); its stderr is log
// lines for reins's host log. Closing its stdin ends it: runs already
// submitted go on on the cluster.
const (
	// OpHello (both ways) is the first line each side sends: Version is
	// the protocol it speaks. A mismatch is refused with one line naming
	// both versions (binaries of two builds must not talk).
	OpHello Op = "hello"
	// OpStart (reins →) submits Task as run ID.
	OpStart Op = "start"
	// OpCancel (reins →) cancels run ID, submitted or still submitting.
	OpCancel Op = "cancel"
	// OpStarted (→ reins) answers OpStart: the cluster accepted run ID,
	// or Failed says how its start settles.
	OpStarted Op = "started"
	// OpResult (→ reins) is run ID's one settled result.
	OpResult Op = "result"
	// OpSpent (→ reins) is run ID's usage so far (Spent, cumulative),
	// sent while it runs when its task has a budget.
	OpSpent Op = "spent"
	// OpProgress (→ reins) is run ID's current selected output (Output)
	// and worker session (Session), from its latest heartbeat.
	OpProgress Op = "progress"
	// OpTerminate (reins →) ends run ID on the cluster without waiting:
	// reins settled it by itself after the cancel grace.
	OpTerminate Op = "terminate"
)

// ProtocolVersion is the version of this protocol; OpHello carries it.
// Bump it with every change a peer of another build would misread.
const ProtocolVersion = 2

// Msg is one protocol line.
type Msg struct {
	Op     Op              `json:"op"`
	ID     uint64          `json:"id"`
	Task   *Task           `json:"task,omitempty"`
	Failed *StartFailure   `json:"failed,omitempty"`
	Result *outcome.Result `json:"result,omitempty"`
	// Session (with OpResult) is the child's own session on the worker
	// that ran it, when it is known: what `reins log` shows there.
	Session string `json:"session,omitempty"`
	// History (with OpResult) is Outcome.History.
	History []session.Event `json:"history,omitempty"`
	// Spent (with OpSpent) is the run's usage so far.
	Spent *Spent `json:"spent,omitempty"`
	// Output (with OpProgress) is the run's current selected output.
	Output []llm.Block `json:"output,omitempty"`
	// Version (with OpHello) is the protocol the sender speaks.
	Version int `json:"version,omitempty"`
}

// StartFailure is a failed start: subagent.StartError without its cause,
// whose text (the cluster's words) stays in the helper's log.
type StartFailure struct {
	StopReason outcome.StopReason `json:"stopReason,omitempty"`
	Diagnostic string             `json:"diagnostic,omitempty"`
}

// MaxLine bounds one protocol line (a result carries the child's output).
const MaxLine = 64 << 20
