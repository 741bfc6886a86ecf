package main

import (
	"fmt"
	"os/signal"
	"syscall"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/spf13/cobra"
)

func newMockLLMCmd(s *streams) *cobra.Command {
	var addr, script string
	c := &cobra.Command{
		Use:   "mock-llm [--addr HOST:PORT] [--script FILE]",
		Short: cli.ExtraShort("mock-llm"),
		Long: "mock-llm answers POST /chat/completions, /v1/chat/completions (chat wire),\n" +
			"/v1/responses, /responses (Responses wire), /v1/messages (Anthropic wire) and\n" +
			"/v1beta/models/MODEL:streamGenerateContent (Gemini wire, also without v1beta)\n" +
			"from one script of replies and faults (see README).\n" +
			"Without --script it echoes the last message. It binds loopback by default and\n" +
			"prints its address on stdout.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc := mock.DefaultScript()
			if script != "" {
				var err error
				if sc, err = mock.Load(script); err != nil {
					return &cli.ExitError{Code: cli.ExitUsage, Msg: "--script: " + err.Error()}
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			err := mock.ListenAndServe(ctx, addr, sc, func(a string) {
				fmt.Fprintf(s.out, "reins mock-llm listening on http://%s\n", a)
			})
			if err != nil && ctx.Err() == nil {
				return &cli.ExitError{Code: cli.ExitFailed, Msg: err.Error()}
			}
			return nil
		},
	}
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "address to listen on")
	c.Flags().StringVar(&script, "script", "", "a YAML or JSON script of replies")
	return c
}
