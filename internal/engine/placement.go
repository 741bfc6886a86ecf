package engine

import "github.com/reinsdev/reins/internal/config"

// Name is the engine's name where a child run's trace span records its
// placement (reins.subagent.placement, docs/telemetry.md): the manager
// asks an engine for it, so a child sent to Temporal reads "temporal",
// not the generic "engine".
func (*helperEngine) Name() string { return string(config.EngineTemporal) }
