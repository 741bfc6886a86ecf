package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/sdkserver"
	"github.com/spf13/cobra"
)

func newSDKCmd(s *streams) *cobra.Command {
	var (
		cfg sdkserver.Config
		f   sessionFlags
	)
	c := &cobra.Command{
		Use:   "sdk",
		Short: "Serve the reins SDK runtime: NDJSON JSON-RPC 2.0 on stdio",
		Long: "Serve the reins SDK runtime: NDJSON JSON-RPC 2.0 on stdin/stdout (initialize, session/prompt,\n" +
			"session/cancel, shutdown; session/event, session/status, subagent/started, subagent/finished).\n" +
			"The flags are defaults; initialize's cwd, model, maxTokens, maxSteps and permission override them,\n" +
			"and its tools limit every session to that allowlist. Logs go to stderr.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.Effort != "" {
				return &exitError{Code: exitUsage, Msg: "--effort: reins sdk takes its effort from config effort"}
			}
			if f.Wire != "" {
				return &exitError{Code: exitUsage, Msg: "--wire: reins sdk takes its wire from config providers.NAME.wire"}
			}
			// The flags are defaults initialize may override, but a flag
			// value that is not one is a usage error like everywhere
			// (docs/cli.md, "Exit status by command").
			if _, err := f.Check(); err != nil {
				return err
			}
			if cfg.MaxTokens < 0 {
				return &exitError{Code: exitUsage, Msg: "--max-tokens: want 0 (the provider's default) or a positive number"}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// Permission and max steps are checked where initialize
			// can override them (sdkserver), not here.
			cfg.Cwd, cfg.ConfigFile, cfg.Model, cfg.BaseURL = f.Cwd, f.Config, f.Model, f.BaseURL
			cfg.Permission, cfg.MaxSteps, cfg.Sandbox = f.Permission, f.MaxSteps, f.Sandbox
			cfg.Version = version
			cfg.OpenEngine = cli.OpenEngine
			cfg.Stderr = s.err
			return sdkserver.New(cfg).Serve(ctx, s.in, s.out)
		},
	}
	fl := c.Flags()
	f.Register(fl, "workspace directory (default: the current directory)")
	fl.IntVar(&cfg.MaxTokens, "max-tokens", 0, "most output tokens per model request (0: the provider's default)")
	return c
}
