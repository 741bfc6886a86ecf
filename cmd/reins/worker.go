package main

import (
	"github.com/reinsdev/reins/internal/engine"
	"github.com/spf13/cobra"
)

// newWorkerCmd is `reins worker`: it becomes `reins-temporal worker` with
// the same arguments (the helper binary holds the Temporal SDK, so that
// no other reins command pays for it; docs/engine.md). On Unix the helper
// replaces this process (exec), so a signal or a SIGKILL meant for the
// worker reaches the worker.
func newWorkerCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "worker [--cwd DIR] [--config FILE] [--base-url URL] [--sandbox on|off] [--permission MODE] [--root DIR]... [--parallel N]",
		Short: "Run child runs for parents on a Temporal cluster (subagents.engine: temporal)",
		Long: "worker polls the task queue of subagents.temporal {address, namespace, taskQueue}\n" +
			"and runs each child it is given with this machine's config, agents, trust and keys,\n" +
			"writing the child's session log here. It runs until SIGINT or SIGTERM.\n" +
			"It is " + engine.HelperName + " worker, found beside reins or on PATH ($" + engine.HelperEnv + " overrides).",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := engine.Helper()
			if err != nil {
				return &exitError{Code: exitUsage, Msg: err.Error()}
			}
			return become(cmd, s, engine.HelperName, path, append([]string{"worker"}, args...))
		},
	}
}
