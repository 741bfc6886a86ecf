// Package engine chooses where child runs execute (subagents.engine,
// docs/engine.md): local, in this process through each provider (nil
// subagent.Engine: the Manager's own path), or temporal, as workflows on
// a Temporal cluster that `reins worker` processes execute, submitted
// through the reins-temporal helper binary (helper.go).
package engine

import (
	"fmt"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/subagent"
)

// Open returns the engine cfg names, and the function that releases it.
// model is the parent's PROVIDER/MODEL, the children's default model on a
// remote worker. The local engine is nil.
func Open(cfg config.Subagents, model string, logf func(string, ...any)) (subagent.Engine, func(), error) {
	switch cfg.Engine {
	case "", config.EngineLocal:
		return nil, func() {}, nil
	case config.EngineTemporal:
		return openTemporal(cfg, model, logf)
	}
	return nil, nil, fmt.Errorf("subagents.engine: unknown engine %q", cfg.Engine)
}
