package cli

import (
	"github.com/reinsdev/reins/internal/engine"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/subagent"
)

// OpenEngine is the engine h's config names (subagents.engine) for a
// parent on model m: nil for local. A bad setting is a configuration
// error (exit 2). run, sdk and batch (reins-extra) open it the same way.
func OpenEngine(h *harness.Harness, m *harness.Model) (subagent.Engine, func(), error) {
	eng, closeFn, err := engine.Open(h.Config.Subagents, m.Provider+"/"+m.Name, h.Logf)
	if err != nil {
		return nil, nil, &harness.ConfigError{Err: err}
	}
	return eng, closeFn, nil
}
