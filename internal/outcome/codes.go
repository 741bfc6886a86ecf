package outcome

import (
	"slices"

	"github.com/reinsdev/reins/internal/llm"
)

// Failure codes a reins turn may end with besides the adapters' (llm.Code*).
// internal/agent and internal/compact write them; they are spelled here
// too so this list needs no runtime import, and a test holds the two
// spellings equal.
const (
	CodeMaxSteps   = "MAX_STEPS"
	CodeMaxWakeups = "MAX_WAKEUPS"
	CodeLogWrite   = "LOG_WRITE"
	CodeNoSummary  = "NO_SUMMARY"
)

// failureCodes is the closed set of failure codes reins itself writes: the
// one list every surface that names a code checks (an in-process child's
// diagnostic category, the error an ACP editor sees). An unknown finish
// reason becomes a code at the adapter, so a code outside this set may be
// provider-chosen text and is never shown.
var failureCodes = []string{
	llm.CodeEmptyResponse, llm.CodeContextWindowExceeded, llm.CodeStreamClosed,
	llm.CodeMalformedResponse, llm.CodeRateLimit, llm.CodeServer, llm.CodeAuth,
	llm.CodeInvalidRequest, llm.CodeTimeout, llm.CodeTransport, llm.CodeAborted,
	llm.CodeQuota,
	CodeMaxSteps, CodeMaxWakeups, CodeLogWrite, CodeNoSummary,
}

// FailureCodes returns a copy of the closed set.
func FailureCodes() []string { return slices.Clone(failureCodes) }

// KnownCode reports whether code is in the closed set.
func KnownCode(code string) bool { return slices.Contains(failureCodes, code) }

// CodeCategory is a failure code as a diagnostic category: the code itself
// when it is in the closed set, CategoryUnknown otherwise.
func CodeCategory(code string) Category {
	if KnownCode(code) {
		return Category(code)
	}
	return CategoryUnknown
}
