package main

import (
	"errors"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/demo"
	"github.com/spf13/cobra"
)

func newDemoCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: cli.ExtraShort("demo"),
		Long: "demo starts the scripted mock model on loopback and runs one task through the real\n" +
			"OpenAI-wire adapter, the same path a real key takes: an empty completion that is\n" +
			"retried, a tool call, a subagent cut off by max-tokens whose partial answer reaches\n" +
			"the parent, and a background job. It prints where the session log is.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := demo.Run(cmd.Context(), s.out)
			if f, ok := errors.AsType[*demo.Failed](err); ok {
				return &cli.ExitError{Code: cli.ExitFailed, Msg: f.Msg}
			}
			return err
		},
	}
}
