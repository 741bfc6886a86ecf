package subagent

import (
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/outcome"
)

// budgetStage is the diagnostic stage of a run a budget stopped: the stage
// of docs/subagents.md in which each provider's child runs its task.
var budgetStage = lazy.Value[map[string]outcome.Stage]{New: func() map[string]outcome.Stage {
	return map[string]outcome.Stage{
		config.ProviderInProcess: outcome.StageRun,
		config.ProviderACP:       outcome.StagePrompt,
		config.ProviderReins:     outcome.StageSessionRun,
		config.ProviderPi:        outcome.StageRun,
	}
}}

func providerOf(req Request) string {
	if req.Agent == nil || req.Agent.Provider == "" {
		return config.ProviderInProcess
	}
	return req.Agent.Provider
}

// budgetDiagnostic is the fixed line of a run a budget stopped.
func budgetDiagnostic(req Request) string {
	p := providerOf(req)
	return outcome.Diagnostic{Provider: p, Stage: budgetStage.Get()[p], Category: outcome.CategoryBudget, StopReason: outcome.StopAborted}.String()
}

// overBudget is the settled result of a start refused because the run's
// budget ran out: nothing was started or published.
func overBudget(req Request) (outcome.Result, bool) {
	if req.Budget.Err() == nil {
		return outcome.Result{}, false
	}
	return outcome.Settle(outcome.Result{StopReason: outcome.StopAborted, Diagnostic: budgetDiagnostic(req)}), true
}

// budgetResult charges an out-of-process run's usage to its budget when it
// settles (an in-process child's loop charged each response itself, and a
// SelfCharging run each as it arrived) and, when the
// budget ran out and the run did not complete, says so: the run ends
// aborted with category budget and keeps its partial output. A run that
// completed before it was stopped keeps its answer.
func budgetResult(req Request, run Run, r outcome.Result) outcome.Result {
	self, _ := run.(SelfCharging)
	if providerOf(req) != config.ProviderInProcess && (self == nil || !self.ChargesBudget()) {
		req.Budget.Charge(r.Usage)
	}
	if r.StopReason == outcome.StopCompleted || req.Budget.Err() == nil {
		return r
	}
	r.StopReason = outcome.StopAborted
	r.Diagnostic = budgetDiagnostic(req)
	return r
}
