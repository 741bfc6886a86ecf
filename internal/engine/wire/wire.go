// Package wire is what crosses between reins and its Temporal helper
// binary, reins-temporal (docs/engine.md): the child run as a task, its
// settled outcome, and the narrow NDJSON protocol reins drives
// `reins-temporal client` with. It imports no Temporal code, so that
// reins itself never pays the SDK's start-up cost (BENCHMARKS.md,
// "Start-up").
package wire

import (
	"time"

	"github.com/reinsdev/reins/internal/config"
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
	// Trace is the W3C trace context of the run's span in the parent: the
	// worker's spans of the run continue it (docs/telemetry.md).
	Trace subagent.TraceContext `json:",omitzero"`
}

// Outcome is a settled run: the child's result, the session on the
// worker under which the child's log lies, and the child's own session
// there (empty when the child never started).
type Outcome struct {
	Result        subagent.Result
	WorkerSession string
	ChildSession  string
}

// TaskOf is the wire form of req for a parent on model (PROVIDER/MODEL).
func TaskOf(req subagent.Request, model string) Task {
	t := Task{
		RunID: req.RunID, Agent: req.Agent.Name, Provider: req.Agent.Provider, Prompt: req.Prompt,
		ParentSession: req.ParentSession, Depth: req.Depth, Cwd: req.Cwd, Permission: string(req.Permission),
		Tools: req.Tools, MaxSteps: req.MaxSteps, MaxTokens: req.MaxTokens, Model: model,
		DenyNetwork: req.Sandbox.DenyNetwork, Timeout: req.Agent.Timeout, Trace: req.Trace,
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
	// OpStart (reins →) submits Task as run ID.
	OpStart Op = "start"
	// OpCancel (reins →) cancels run ID, submitted or still submitting.
	OpCancel Op = "cancel"
	// OpStarted (→ reins) answers OpStart: the cluster accepted run ID,
	// or Failed says how its start settles.
	OpStarted Op = "started"
	// OpResult (→ reins) is run ID's one settled result.
	OpResult Op = "result"
)

// Msg is one protocol line.
type Msg struct {
	Op     Op               `json:"op"`
	ID     uint64           `json:"id"`
	Task   *Task            `json:"task,omitempty"`
	Failed *StartFailure    `json:"failed,omitempty"`
	Result *subagent.Result `json:"result,omitempty"`
	// Session (with OpResult) is the child's own session on the worker
	// that ran it, when it is known: what `reins log` shows there.
	Session string `json:"session,omitempty"`
}

// StartFailure is a failed start: subagent.StartError without its cause,
// whose text (the cluster's words) stays in the helper's log.
type StartFailure struct {
	StopReason string `json:"stopReason,omitempty"`
	Diagnostic string `json:"diagnostic,omitempty"`
}

// MaxLine bounds one protocol line (a result carries the child's output).
const MaxLine = 64 << 20
