package outcome

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/reinsdev/reins/internal/llm"
)

// MaxDiagnosticBytes bounds a diagnostic (docs/subagents.md).
const MaxDiagnosticBytes = 4096

// Diagnostic is the fixed, allow-listed failure line of docs/subagents.md. Every
// field comes from a closed set chosen by reins code — a provider name, a
// stage, a category, a stop reason, an observed exit status — and never from
// text a child or its transport produced. Empty fields are left out with
// their separator.
type Diagnostic struct {
	Provider   string
	Stage      Stage
	Category   Category
	StopReason StopReason
	// ExitCode is set when the child's exit status was observed.
	ExitCode *int
	Signal   string
}

// Stage is where in a child's life a failure happened (docs/subagents.md).
// The closed set is Stages.
type Stage string

// Category is what kind of failure it was (docs/subagents.md). The closed
// set is Categories plus the failure codes of a reins turn (llm.Codes,
// CodeCategory).
type Category string

// Stages and categories (docs/subagents.md).
const (
	StageInitialize Stage = "initialize"
	StageNewSession Stage = "new-session"
	// StageLoadSession is an ACP child's session/load: a continuation
	// after its idle teardown.
	StageLoadSession Stage = "load-session"
	StagePrompt      Stage = "prompt"
	StageProcess     Stage = "process"
	StageTeardown    Stage = "teardown"
	StageSessionRun  Stage = "session-run"
	StageShutdown    Stage = "shutdown"
	StageRun         Stage = "run"
	// StageEngine is a child run by an engine other than local
	// (docs/engine.md) that failed in the engine, not in the child.
	StageEngine Stage = "engine"
	// StageRemote is a remote child the parent settled by itself: the
	// far side did not answer its cancel within subagents.cancelGrace,
	// or was lost (docs/engine.md, "Deadlines").
	StageRemote Stage = "remote"

	CategoryConfiguration   Category = "configuration"
	CategoryTransport       Category = "transport"
	CategoryProcessExit     Category = "process-exit"
	CategoryProcessStart    Category = "process-start"
	CategoryProtocol        Category = "protocol"
	CategoryRemoteLimit     Category = "remote-limit"
	CategoryUnknown         Category = "unknown"
	CategoryChildError      Category = "child-error"
	CategoryChildDisposed   Category = "child-disposed"
	CategoryChildUnknown    Category = "child-unknown"
	CategoryMissingTerminal Category = "missing-terminal"
	CategoryTimeout         Category = "timeout"
	// CategoryEmptyOutput is an ACP child that ended end_turn without any
	// output (docs/subagents.md, "Empty answers").
	CategoryEmptyOutput Category = "empty-output"
	// CategoryBudget is a run stopped because the delegation tree's
	// budget (or its agent file's) ran out (internal/budget).
	CategoryBudget Category = "budget"
	// CategoryStalled is a child that sent nothing for
	// subagents.stallTimeout and was stopped.
	CategoryStalled Category = "stalled"
	// CategoryNotContinuable is a continuation the child cannot take: an
	// ACP agent without loadSession whose process was torn down.
	CategoryNotContinuable Category = "not-continuable"
	// CategoryEngineUnavailable is an engine that could not take or keep
	// the run: its cluster unreachable, the run rejected or timed out
	// waiting for a worker (docs/engine.md).
	CategoryEngineUnavailable Category = "engine-unavailable"
	// CategoryWorkerLost is a run whose workers kept dying under it until
	// its retries ran out (docs/engine.md).
	CategoryWorkerLost Category = "worker-lost"
)

// Stages lists every stage.
var Stages = []Stage{
	StageInitialize, StageNewSession, StageLoadSession, StagePrompt, StageProcess,
	StageTeardown, StageSessionRun, StageShutdown, StageRun, StageEngine,
}

// Categories lists every category that is not a failure code.
var Categories = []Category{
	CategoryConfiguration, CategoryTransport, CategoryProcessExit, CategoryProcessStart,
	CategoryProtocol, CategoryRemoteLimit, CategoryUnknown, CategoryChildError,
	CategoryChildDisposed, CategoryChildUnknown, CategoryMissingTerminal, CategoryTimeout,
	CategoryEmptyOutput, CategoryBudget, CategoryStalled, CategoryNotContinuable,
	CategoryEngineUnavailable, CategoryWorkerLost,
}

// ParseStage returns s as a Stage when it is in the closed set.
func ParseStage(s string) (Stage, bool) {
	st := Stage(s)
	return st, slices.Contains(Stages, st)
}

// ParseCategory returns s as a Category when it is in the closed set: a
// category of Categories or a known failure code.
func ParseCategory(s string) (Category, bool) {
	c := Category(s)
	if slices.Contains(Categories, c) || llm.Code(s).Known() {
		return c, true
	}
	return c, false
}

func (s Stage) String() string    { return string(s) }
func (c Category) String() string { return string(c) }

// String renders the line.
func (d Diagnostic) String() string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+": "+v)
		}
	}
	add("provider", d.Provider)
	add("stage", string(d.Stage))
	add("category", string(d.Category))
	add("stop reason", string(d.StopReason))
	if d.ExitCode != nil {
		add("exit code", strconv.Itoa(*d.ExitCode))
	}
	add("signal", d.Signal)
	return "Subagent failure (" + strings.Join(parts, "; ") + ")"
}

// PermissionLine is the second diagnostic line of docs/subagents.md, when a permission
// decision contributed to the outcome.
type PermissionLine struct {
	Policy   string // allow | reject
	Request  string // the closed ACP tool kind
	Decision string // allowed | rejected | cancelled
}

func (p PermissionLine) String() string {
	return "Permission decision (policy: " + p.Policy + "; request: " + p.Request + "; decision: " + p.Decision + ")"
}

// Bound cuts s to at most MaxDiagnosticBytes on a UTF-8 boundary. It is
// applied at the one settlement point every result passes.
func Bound(s string) string {
	if len(s) <= MaxDiagnosticBytes {
		return s
	}
	cut := MaxDiagnosticBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Settle is the single point every provider's result passes before anyone
// sees it: the stop reason is one of the five (anything else is an error),
// an empty output is nil, and the diagnostic is bounded.
func Settle(r Result) Result {
	switch r.StopReason {
	case StopCompleted, StopMaxTokens, StopAborted, StopRefusal, StopError:
	default:
		r.StopReason = StopError
	}
	if len(r.Output) == 0 {
		r.Output = nil
	}
	if r.StopReason == StopCompleted {
		r.Diagnostic = ""
	}
	r.Diagnostic = Bound(r.Diagnostic)
	return r
}
