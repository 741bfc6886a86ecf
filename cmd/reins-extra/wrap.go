package main

import (
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/subagent/pichild"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/wrap"
	"github.com/spf13/cobra"
)

func newWrapCmd(s *streams) *cobra.Command {
	var grace time.Duration
	c := &cobra.Command{
		Use:   "wrap META.json",
		Short: cli.ExtraShort("wrap"),
		Long: "wrap runs the pi child described by META.json (found on PATH), normalizes its JSON\n" +
			"events into eventsPath, keeps its stdout, stderr and a transcript, and writes\n" +
			"resultPath. It exits 0 once result.json is written, whatever the child did, and\n" +
			"non-zero only when result.json cannot be written. SIGINT or SIGTERM tears the\n" +
			"child down and still writes result.json.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			meta, err := wrap.LoadMeta(args[0])
			if err != nil {
				return &cli.ExitError{Code: cli.ExitUsage, Msg: "wrap: " + err.Error()}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			res, err := wrap.Run(ctx, meta, wrap.Options{Grace: grace, Confine: pichild.Confine(sandbox.Policy{Mode: sandbox.FullAccess})})
			if err != nil {
				return &cli.ExitError{Code: cli.ExitFailed, Msg: "wrap: " + err.Error()}
			}
			if res.ArtifactErr != nil {
				fmt.Fprintln(s.err, "reins: wrap: warning: "+termsafe.Escape(res.ArtifactErr.Error()))
			}
			return nil
		},
	}
	c.Flags().DurationVar(&grace, "grace", wrap.DefaultGrace, "how long a child that gave its final answer may take to exit before it is torn down")
	return c
}
