// Package outcome is the contract every child settles into, whatever runs
// it: the five stop reasons, the Result, the one output-selection fold, the
// fixed diagnostics, the closed failure-code list, settlement and the
// rendering of a result for a parent's model.
//
// It depends on llm and session only, so the pi wrapper, the SDK client,
// the ACP agent and the viewer apply the same rules as the delegation
// runtime (internal/subagent) without linking the agent loop, MCP or the
// sandbox. The import-rule test (internal/importrules) keeps it a leaf.
package outcome

import (
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

// StopReason is how a run ended (docs/subagents.md): the one vocabulary
// every placement maps its child's ending into.
//
// StopReason, Stage and Category are aliases of string while seven
// branches that build diagnostics from plain strings are merged; making
// each a defined type is then a one-word change here plus the compile
// fixes it forces. Until then Settle and CodeCategory confine the values.
type StopReason = string

// Stop reasons of a run; Settle confines any value to these five.
const (
	StopCompleted StopReason = "completed"
	StopMaxTokens StopReason = "max-tokens"
	StopAborted   StopReason = "aborted"
	StopRefusal   StopReason = "refusal"
	StopError     StopReason = "error"
)

// StopReasons lists the five in their documented order.
var StopReasons = []StopReason{StopCompleted, StopMaxTokens, StopAborted, StopRefusal, StopError}

// Result is how a run settled. It is a value, never a Go error: a child's
// failure is a stop reason plus a fixed diagnostic.
type Result struct {
	Output     []llm.Block
	StopReason StopReason
	// Diagnostic is a fixed, allow-listed line (docs/subagents.md), empty for a
	// completed or locally cancelled run.
	Diagnostic string
	Usage      llm.Usage
	// Worktree is the line an isolated child's result ends with (before
	// its child line): its branch, what it changed and whether it merges
	// (internal/worktree's Status.Line); "" for a child without
	// `isolation: worktree`.
	Worktree string
	// Refusals are the refusals the child's own calls got (a question
	// answered no, the read-only mode, a rule; in-process children), the
	// first MaxRefusals of them: the tool result says them, so a child
	// that completed after a refusal is not read as having done it all.
	Refusals []string
	// Refused counts them all.
	Refused int
	// Note is a line of reins's own about the output, shown after it: a
	// remote child settled by its parent from its last heartbeat says its
	// full log is on its worker (internal/engine/remote). Never child text.
	Note string `json:",omitempty"`
}

// MaxRefusals bounds the refusals a result quotes.
const MaxRefusals = 3

// StopReasonOf maps a reins turn-end reason to a stop reason: the mapping
// for in-process children, reins SDK children and `reins run` alike.
// interrupted (written only by crash repair) and anything unknown are
// errors.
func StopReasonOf(turnEnd string) StopReason {
	switch turnEnd {
	case session.ReasonCompleted:
		return StopCompleted
	case session.ReasonMaxTokens:
		return StopMaxTokens
	case session.ReasonAborted:
		return StopAborted
	case session.ReasonRefusal:
		return StopRefusal
	}
	return StopError
}
