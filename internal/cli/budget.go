package cli

import (
	"cmp"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/models"
)

// BudgetFlags are the caps of `reins run` and `reins batch` over the whole delegation tree
// (docs/cli.md, "Budgets"); each overrides config `budget:`.
type BudgetFlags struct {
	tokens  int
	usd     float64
	timeout time.Duration
}

// Register adds --budget-tokens, --budget-usd and --timeout to fl.
func (f *BudgetFlags) Register(fl *pflag.FlagSet) {
	fl.IntVar(&f.tokens, "budget-tokens", 0, "most input+output tokens for the run and all its children (0: config's budget.tokens, else none)")
	fl.Float64Var(&f.usd, "budget-usd", 0, "most US dollars for the run and all its children, at the models' prices (0: config's budget.usd, else none)")
	fl.DurationVar(&f.timeout, "timeout", 0, "most wall time for the run and all its children, such as 10m (0: config's budget.time, else none)")
}

// Limits are the run's budget: the flags over config `budget:`, then
// inside that the --agent file's own budget. A dollar cap needs the
// model's price: an unknown price would never count, so it is a usage
// error rather than a cap that cannot bite.
func (f *BudgetFlags) Limits(h *harness.Harness, m *harness.Model) (budget.Limits, error) {
	for _, bad := range []struct {
		neg  bool
		flag string
	}{{f.tokens < 0, "--budget-tokens"}, {f.usd < 0, "--budget-usd"}, {f.timeout < 0, "--timeout"}} {
		if bad.neg {
			return budget.Limits{}, &ExitError{Code: ExitUsage, Msg: bad.flag + ": want 0 (the config's budget) or a positive value"}
		}
	}
	c := h.Config.Budget
	l := budget.Limits{
		Tokens: cmp.Or(f.tokens, c.Tokens),
		USD:    cmp.Or(f.usd, c.USD),
		Time:   cmp.Or(f.timeout, c.Time),
	}
	if l.USD > 0 {
		spec := m.Provider + "/" + m.Name
		p := models.Lookup(h.Config.Models, spec).Price
		if p.Input == nil || p.Output == nil {
			return l, &ExitError{Code: ExitUsage, Msg: fmt.Sprintf("--budget-usd: the price of %s is unknown; set it in config models: {%q: {price: {input, output}}}", spec, spec)}
		}
	}
	return l, nil
}

// AgentBudget is an agent file's own budget, as limits.
func AgentBudget(ag *config.Agent) budget.Limits {
	if ag == nil {
		return budget.Limits{}
	}
	return budget.Limits(ag.Budget)
}
