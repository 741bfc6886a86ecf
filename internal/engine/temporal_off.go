//go:build notemporal

package engine

import (
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/subagent"
)

func openTemporal(config.Subagents, string, func(string, ...any)) (subagent.Engine, func(), error) {
	return nil, nil, ErrNoTemporal
}
