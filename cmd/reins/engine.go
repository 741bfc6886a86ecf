package main

import (
	"context"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/subagent"
)

// newEngine is the engine h's config names (subagents.engine): nil for
// local, the children running in this process.
func newEngine(ctx context.Context, h *harness.Harness) (subagent.Engine, func(), error) {
	return nil, func() {}, nil
}
