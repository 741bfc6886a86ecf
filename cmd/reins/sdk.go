package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/reinsdev/reins/internal/agent"
	"github.com/reinsdev/reins/internal/sdkserver"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/spf13/cobra"
)

func newSDKCmd(s *streams) *cobra.Command {
	var cfg sdkserver.Config
	c := &cobra.Command{
		Use:   "sdk",
		Short: "Serve the reins SDK runtime: NDJSON JSON-RPC 2.0 on stdio",
		Long: "Serve the reins SDK runtime: NDJSON JSON-RPC 2.0 on stdin/stdout (initialize, session/prompt,\n" +
			"session/cancel, shutdown; session/event, session/status, subagent/started, subagent/finished).\n" +
			"The flags are defaults; initialize's cwd, model and maxTokens override them. Logs go to stderr.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg.Version = version
			cfg.Stderr = s.err
			return sdkserver.New(cfg).Serve(ctx, s.in, s.out)
		},
	}
	fl := c.Flags()
	fl.StringVar(&cfg.Cwd, "cwd", "", "workspace directory (default: the current directory)")
	fl.StringVar(&cfg.ConfigFile, "config", "", "an extra config file, applied last")
	fl.StringVarP(&cfg.Model, "model", "m", "", "model as PROVIDER/MODEL (default from config, else deepseek/deepseek-chat)")
	fl.StringVar(&cfg.BaseURL, "base-url", "", "the provider's base URL")
	fl.IntVar(&cfg.MaxSteps, "max-steps", agent.DefaultMaxSteps, "most steps in a turn")
	fl.IntVar(&cfg.MaxTokens, "max-tokens", 0, "most output tokens per model request (0: the provider's default)")
	fl.StringVar(&cfg.Permission, "permission", string(tool.WorkspaceWrite), "read-only, workspace-write or full-access")
	return c
}
