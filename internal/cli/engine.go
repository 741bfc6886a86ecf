package cli

import (
	"github.com/reinsdev/reins/internal/budget"
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

// StartTree resolves the model (model, baseURL: the flags) of the
// command's sessions, opens the engine h's config names for a parent on
// it (OpenEngine), makes it h's, and starts one budget over everything the
// command runs (the flags', or the config's budget:): how batch and
// mcp-serve (reins-extra) begin. A model that does not resolve is said
// before anything runs. stop ends the budget, then closes the engine.
func (f *BudgetFlags) StartTree(h *harness.Harness, model, baseURL string) (tree *budget.Budget, stop func(), err error) {
	m, err := h.ResolveModel(model, baseURL)
	if err != nil {
		return nil, nil, err
	}
	limits, err := f.Limits(h, m)
	if err != nil {
		return nil, nil, err
	}
	eng, closeEng, err := OpenEngine(h, m)
	if err != nil {
		return nil, nil, err
	}
	h.Engine = eng
	tree = budget.New(limits)
	return tree, func() { tree.Stop(); closeEng() }, nil
}
