package main

import (
	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/logview"
	"github.com/spf13/cobra"
)

func newLogCmd(s *streams) *cobra.Command {
	var (
		asJSON bool
		lf     logview.Filter
		all    bool
	)
	c := &cobra.Command{
		Use:   "log [SESSION]",
		Short: "List sessions newest first, or render one (children as a tree)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := sessionsRoot()
			if len(args) == 0 {
				if lf.Limit < 0 {
					return &exitError{Code: exitUsage, Msg: "--limit: want 0 or more"}
				}
				if all && lf.Cwd != "" {
					return &exitError{Code: exitUsage, Msg: "--all and --cwd: give one"}
				}
				if !all {
					// Without --all: one workspace, the current directory
					// unless --cwd names another.
					abs, err := cli.AbsCwd(lf.Cwd)
					if err != nil {
						return err
					}
					lf.Cwd = abs
				}
				if err := logview.List(s.out, root, asJSON, lf); err != nil {
					return &exitError{Code: exitFailed, Msg: err.Error()}
				}
				return nil
			}
			id, err := resolveSessionArg(root, args[0])
			if err != nil {
				return err
			}
			ld, err := logview.Load(root, id)
			if err != nil {
				return &exitError{Code: exitFailed, Msg: err.Error()}
			}
			if asJSON {
				return logview.JSON(s.out, ld)
			}
			logview.Show(s.out, root, ld)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the raw events (or, without SESSION, the headers)")
	c.Flags().IntVar(&lf.Limit, "limit", 20, "list at most N sessions (0: no limit)")
	c.Flags().StringVar(&lf.Cwd, "cwd", "", "list the sessions of this workspace (default: the current directory)")
	c.Flags().BoolVar(&all, "all", false, "list the sessions of every workspace")
	return c
}
