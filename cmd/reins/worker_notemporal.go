//go:build notemporal

package main

import (
	"context"

	"github.com/reinsdev/reins/internal/engine"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/tool"
)

// serveWorker fails: this reins has no temporal engine.
func serveWorker(context.Context, *harness.Harness, harness.Options, string, tool.Permission, int, []string) error {
	return engine.ErrNoTemporal
}
