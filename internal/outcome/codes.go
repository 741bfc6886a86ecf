package outcome

import "github.com/reinsdev/reins/internal/llm"

// CodeCategory is a failure code as a diagnostic category: the code itself
// when it is in the closed set (llm.Codes), CategoryUnknown otherwise. An
// unknown finish reason becomes a code at the adapter, so a code outside
// the set may be provider-chosen text and is never shown.
func CodeCategory(code llm.Code) Category {
	if code.Known() {
		return Category(code)
	}
	return CategoryUnknown
}
