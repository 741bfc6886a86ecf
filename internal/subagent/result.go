// Package subagent is delegation: the result contract every kind of child
// settles into, the one output-selection rule, the subagent tool, background
// jobs, the fixed safe diagnostics, and the providers that run children.
package subagent

import (
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

// Stop reasons of a run (docs/subagents.md): the one vocabulary every provider maps
// its child's ending into.
const (
	StopCompleted = "completed"
	StopMaxTokens = "max-tokens"
	StopAborted   = "aborted"
	StopRefusal   = "refusal"
	StopError     = "error"
)

// Result is how a run settled. It is a value, never a Go error: a child's
// failure is a stop reason plus a fixed diagnostic.
type Result struct {
	Output     []llm.Block
	StopReason string
	// Diagnostic is a fixed, allow-listed line (docs/subagents.md), empty for a
	// completed or locally cancelled run.
	Diagnostic string
	Usage      llm.Usage
}

// StopReasonOf maps a reins turn-end reason to a stop reason: the mapping
// for in-process children, reins SDK children and `reins run` alike.
// interrupted (written only by crash repair) and anything unknown are
// errors.
func StopReasonOf(turnEnd string) string {
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
