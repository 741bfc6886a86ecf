//go:build !notemporal

package engine

import (
	"fmt"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/engine/temporal"
	"github.com/reinsdev/reins/internal/subagent"
)

func openTemporal(cfg config.Subagents, model string, logf func(string, ...any)) (subagent.Engine, func(), error) {
	e, err := temporal.Dial(cfg.Temporal, logf)
	if err != nil {
		return nil, nil, fmt.Errorf("subagents.temporal: %w", err)
	}
	e.Model = model
	// Submitting a run is its start: subagents.startTimeout bounds it.
	e.Submit = cfg.StartTimeout
	return e, e.Close, nil
}
