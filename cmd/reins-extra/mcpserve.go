package main

import (
	"context"
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/mcpserve"
)

type mcpServeFlags struct {
	cli.SessionFlags
	cli.BudgetFlags
	maxTokens int
}

// newMCPCmd is reins-extra's `mcp`: it holds only `serve` (reins's own
// `mcp list` stays in reins, which forwards `mcp serve` here).
func newMCPCmd(s *streams) *cobra.Command {
	c := &cobra.Command{
		Use:   "mcp",
		Short: "MCP (docs/mcp-server.md)",
		Args:  cobra.NoArgs,
	}
	c.AddCommand(newMCPServeCmd(s))
	return c
}

func newMCPServeCmd(s *streams) *cobra.Command {
	var f mcpServeFlags
	c := &cobra.Command{
		Use:   "serve [flags]",
		Short: cli.MCPServe.Short,
		Long: "serve speaks MCP on stdio: tools run, reply, child_output, job_output and job_kill give an MCP\n" +
			"client reins's children under the subagent result contract (docs/mcp-server.md). Every call is\n" +
			"a child session of its workspace, in --permission at most; --budget-tokens and --budget-usd\n" +
			"bound the server's whole lifetime. stdout carries protocol frames only.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return mcpServeMain(cmd.Context(), s, &f)
		},
	}
	fl := c.Flags()
	f.SessionFlags.Register(fl, "the server's workspace: a call's cwd must lie within it (default: the current directory)")
	fl.IntVar(&f.maxTokens, "max-tokens", 0, "most output tokens per model request (0: the provider's default)")
	f.BudgetFlags.Register(fl)
	return c
}

func mcpServeMain(ctx context.Context, s *streams, f *mcpServeFlags) error {
	perm, err := f.Check()
	if err != nil {
		return err
	}
	if f.maxTokens < 0 {
		return &cli.ExitError{Code: cli.ExitUsage, Msg: "--max-tokens: want 0 (the provider's default) or a positive number"}
	}
	hopts := harness.Options{Cwd: f.Cwd, ConfigFile: f.Config, Sandbox: f.Sandbox, Effort: f.EffortOf(), Wire: f.Wire, Network: f.Network}
	base, err := harness.New(hopts)
	if err != nil {
		return err
	}
	defer base.Close()
	cli.NoticeUntrusted(s.err, base)
	cli.WarnBroken(s.err, base)
	// A model that does not resolve is said now, on stderr, before the
	// client sees a server whose every call fails. One budget for the
	// server's lifetime: once it runs out no call starts, and running
	// ones stop, aborted with category budget.
	tree, stop, err := f.BudgetFlags.StartTree(base, f.Model, f.BaseURL)
	if err != nil {
		return err
	}
	defer stop()

	ctx, sigs := cli.WatchServing(ctx)
	defer sigs.Stop()

	in, _ := s.in.(io.ReadCloser)
	if in == nil {
		in = io.NopCloser(s.in)
	}
	srv := mcpserve.New(mcpserve.Options{
		Base: base, Harness: hopts, Model: f.Model, BaseURL: f.BaseURL,
		MaxSteps: f.MaxSteps, MaxTokens: f.maxTokens, Permission: perm,
		Engine: base.Engine, Budget: tree, Version: version,
	})
	err = srv.Serve(ctx, in, nopWriteCloser{s.out})
	got := sigs.Stop()
	if err != nil && !errors.Is(err, context.Canceled) {
		return &cli.ExitError{Code: cli.ExitFailed, Msg: err.Error()}
	}
	return cli.ServedExit(got)
}

// nopWriteCloser keeps the server from closing stdout: Main's watcher
// owns it.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
