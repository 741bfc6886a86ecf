package harness

import (
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/subagent"
)

// providers are the subagent providers a session made with o offers, by
// the agent-definition provider name. Each out-of-process provider lives in
// its own package under internal/subagent.
func (h *Harness) providers(o SessionOptions) map[string]subagent.Provider {
	return map[string]subagent.Provider{
		config.ProviderInProcess: &subagent.InProcess{NewChild: h.childFactory(o)},
	}
}
