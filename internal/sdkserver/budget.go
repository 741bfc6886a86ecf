package sdkserver

import (
	"errors"
	"time"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/sdk"
)

// budgetLimits are initialize's budget over the config's, field by field.
func budgetLimits(p *sdk.Budget, cfg config.Budget) (budget.Limits, error) {
	l := budget.Limits(cfg)
	if p == nil {
		return l, nil
	}
	if p.Tokens < 0 || p.USD < 0 {
		return l, errors.New("budget: tokens and usd must not be negative")
	}
	if p.Tokens > 0 {
		l.Tokens = p.Tokens
	}
	if p.USD > 0 {
		l.USD = p.USD
	}
	if p.Time != "" {
		d, err := time.ParseDuration(p.Time)
		if err != nil || d <= 0 {
			return l, errors.New("budget: time must be a duration > 0 such as 90s")
		}
		l.Time = d
	}
	return l, nil
}
