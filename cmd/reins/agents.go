package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/spf13/cobra"
)

func newAgentsCmd(s *streams) *cobra.Command {
	var cwd, cfg string
	c := &cobra.Command{
		Use:   "agents",
		Short: "List the agent definitions found, with where each came from",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			h, err := harness.New(harness.Options{Cwd: cwd, ConfigFile: cfg})
			if err != nil {
				return err
			}
			defer h.Close()
			tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tPROVIDER\tMODEL\tSOURCE\tDESCRIPTION")
			for _, a := range h.Agents.List() {
				model := a.Model
				if model == "" {
					model = "(parent's)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Name, a.Provider, model, a.Source, clip(a.Description, 60))
			}
			tw.Flush()
			for _, w := range h.Warnings {
				fmt.Fprintln(s.err, "warning: "+w.String())
			}
			return nil
		},
	}
	c.Flags().StringVar(&cwd, "cwd", "", "workspace directory (default: the current directory)")
	c.Flags().StringVar(&cfg, "config", "", "an extra config file, applied last")
	return c
}
