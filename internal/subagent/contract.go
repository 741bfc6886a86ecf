package subagent

import "github.com/reinsdev/reins/internal/outcome"

// The result contract lives in internal/outcome, a leaf every consumer can
// import without the delegation runtime. These names keep the callers that
// say subagent.X compiling unchanged; new code imports outcome.

type (
	Result         = outcome.Result
	StopReason     = outcome.StopReason
	Fold           = outcome.Fold
	Diagnostic     = outcome.Diagnostic
	PermissionLine = outcome.PermissionLine
	Stage          = outcome.Stage
	Category       = outcome.Category
)

const (
	StopCompleted = outcome.StopCompleted
	StopMaxTokens = outcome.StopMaxTokens
	StopAborted   = outcome.StopAborted
	StopRefusal   = outcome.StopRefusal
	StopError     = outcome.StopError

	MaxDiagnosticBytes = outcome.MaxDiagnosticBytes

	StageInitialize  = outcome.StageInitialize
	StageNewSession  = outcome.StageNewSession
	StageLoadSession = outcome.StageLoadSession
	StagePrompt      = outcome.StagePrompt
	StageProcess     = outcome.StageProcess
	StageTeardown    = outcome.StageTeardown
	StageSessionRun  = outcome.StageSessionRun
	StageShutdown    = outcome.StageShutdown
	StageRun         = outcome.StageRun
	StageEngine      = outcome.StageEngine

	CategoryConfiguration     = outcome.CategoryConfiguration
	CategoryTransport         = outcome.CategoryTransport
	CategoryProcessExit       = outcome.CategoryProcessExit
	CategoryProcessStart      = outcome.CategoryProcessStart
	CategoryProtocol          = outcome.CategoryProtocol
	CategoryRemoteLimit       = outcome.CategoryRemoteLimit
	CategoryUnknown           = outcome.CategoryUnknown
	CategoryChildError        = outcome.CategoryChildError
	CategoryChildDisposed     = outcome.CategoryChildDisposed
	CategoryChildUnknown      = outcome.CategoryChildUnknown
	CategoryMissingTerminal   = outcome.CategoryMissingTerminal
	CategoryTimeout           = outcome.CategoryTimeout
	CategoryEmptyOutput       = outcome.CategoryEmptyOutput
	CategoryBudget            = outcome.CategoryBudget
	CategoryStalled           = outcome.CategoryStalled
	CategoryNotContinuable    = outcome.CategoryNotContinuable
	CategoryEngineUnavailable = outcome.CategoryEngineUnavailable
	CategoryWorkerLost        = outcome.CategoryWorkerLost
)

var (
	StopReasonOf         = outcome.StopReasonOf
	FinalOutput          = outcome.FinalOutput
	LastAssistantMessage = outcome.LastAssistantMessage
	Bound                = outcome.Bound
	Settle               = outcome.Settle
	Headline             = outcome.Headline
	ChildLine            = outcome.ChildLine
	KnownCode            = outcome.KnownCode
	CodeCategory         = outcome.CodeCategory
)
