package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/reinsdev/reins/internal/acp"
	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/spf13/cobra"
)

// newACPCmd is `reins acp`: reins as an ACP agent on stdio. stdout carries
// protocol frames only; configuration errors are reported on stderr before
// anything is served.
func newACPCmd(s *streams) *cobra.Command {
	var f cli.SessionFlags
	c := &cobra.Command{
		Use:   "acp",
		Short: cli.ExtraShort("acp"),
		Long: "Serve the Agent Client Protocol on stdio, for Zed and other ACP editors.\n" +
			"Every ACP session is a reins session in the editor's workspace; tools that need more than\n" +
			"read-only access ask the editor for permission.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return acpMain(cmd.Context(), s, &f)
		},
	}
	fl := c.Flags()
	f.Register(fl, "directory whose configuration is checked at startup (default: the current directory); sessions use the editor's workspace")
	return c
}

func acpMain(ctx context.Context, s *streams, f *cli.SessionFlags) error {
	perm, err := f.Check()
	if err != nil {
		return err
	}
	h, err := harness.New(harness.Options{Cwd: f.Cwd, ConfigFile: f.Config, Sandbox: f.Sandbox, Effort: f.EffortOf(), Wire: f.Wire, Network: f.Network})
	if err != nil {
		return err
	}
	defer h.Close()
	// An unknown model is a clear error now. A missing key is not: the
	// editor would only see a broken pipe. reins starts, says so on
	// stderr, and answers the first prompt with an error naming the
	// variable.
	if _, err := h.ResolveModel(f.Model, f.BaseURL); err != nil {
		var missing *config.MissingKeyError
		if !errors.As(err, &missing) {
			return err
		}
		fmt.Fprintf(s.err, "reins: warning: %s; prompts will fail until it is set\n", missing.Error())
	}
	// An editor that goes away mid-turn must not kill reins with SIGPIPE
	// before the turn is ended and the log closed (cli.WatchServing).
	ctx, sigs := cli.WatchServing(ctx)
	defer sigs.Stop()
	err = acp.Serve(ctx, acp.Options{
		Base: h, ConfigFile: f.Config, Model: f.Model, BaseURL: f.BaseURL,
		Permission: perm, MaxSteps: f.MaxSteps, Version: version, Sandbox: f.Sandbox,
	}, s.in, s.out)
	got := sigs.Stop()
	if err != nil {
		return &cli.ExitError{Code: cli.ExitFailed, Msg: err.Error()}
	}
	return cli.ServedExit(got)
}
