//go:build !notemporal

package main

import (
	"context"

	"github.com/reinsdev/reins/internal/engine/temporal"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/tool"
)

// serveWorker runs the Temporal worker of `reins worker` until ctx ends.
func serveWorker(ctx context.Context, h *harness.Harness, opts harness.Options, baseURL string, perm tool.Permission, parallel int, roots []string) error {
	r := &temporal.Runner{Options: opts, BaseURL: baseURL, MaxPermission: perm, Roots: roots, Logf: h.Logf}
	return temporal.Serve(ctx, h.Config.Subagents.Temporal, parallel, r.Run, h.Logf)
}
