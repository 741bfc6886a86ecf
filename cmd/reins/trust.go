package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/trust"
	"github.com/spf13/cobra"
)

// newTrustCmd is `reins trust [DIR]`, `reins trust --list` and
// `reins trust --revoke DIR`: the folders whose own files (.reins/config.yaml,
// .reins/agents, .claude/agents) reins uses. Everything is kept in
// $REINS_HOME/trusted.json by internal/trust.
func newTrustCmd(s *streams) *cobra.Command {
	var (
		list   bool
		revoke string
		yes    bool
	)
	c := &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Trust a folder, so that its .reins and .claude files take effect",
		Long: "Trust DIR (default: the current directory) and every folder below it: reins then uses its\n" +
			".reins/config.yaml, .reins/agents and .claude/agents. In a folder you have not trusted, reins\n" +
			"ignores them, because they can start programs and choose where your API keys are sent.\n" +
			"The list is kept in $REINS_HOME/trusted.json.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store := trust.New(harness.DefaultHome(os.Getenv))
			revoking := cmd.Flags().Changed("revoke")
			switch {
			case list && (revoking || len(args) > 0):
				return &exitError{Code: exitUsage, Msg: "trust --list takes no folder"}
			case revoking && len(args) > 0:
				return &exitError{Code: exitUsage, Msg: "trust --revoke takes its folder as its value: reins trust --revoke DIR"}
			case revoking && revoke == "":
				return &exitError{Code: exitUsage, Msg: "trust --revoke: want a folder"}
			case list:
				folders, err := store.List()
				if err != nil {
					return &exitError{Code: exitUsage, Msg: err.Error()}
				}
				for _, f := range folders {
					fmt.Fprintln(s.out, trust.Quote(f.Path))
				}
				return nil
			case revoking:
				dir, err := store.Revoke(cmd.Context(), revoke)
				var nt *trust.NotTrustedError
				var ce *trust.CorruptError
				switch {
				case errors.As(err, &nt), errors.As(err, &ce):
					return &exitError{Code: exitUsage, Msg: err.Error()}
				case err != nil:
					return &exitError{Code: exitFailed, Msg: "trust --revoke: " + err.Error()}
				}
				fmt.Fprintln(s.out, "revoked "+trust.Quote(dir))
				if via, ok, _ := store.Covering(dir); ok {
					fmt.Fprintln(s.out, "still trusted through "+trust.Quote(via))
				}
				return nil
			}
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			if err := wideTrust(dir, yes); err != nil {
				return err
			}
			canon, err := store.Trust(cmd.Context(), dir)
			var ce *trust.CorruptError
			switch {
			case errors.As(err, &ce):
				return &exitError{Code: exitUsage, Msg: err.Error()}
			case errors.Is(err, os.ErrNotExist):
				return &exitError{Code: exitUsage, Msg: "trust: no such folder: " + trust.Quote(dir)}
			case err != nil:
				return &exitError{Code: exitUsage, Msg: "trust: " + err.Error()}
			}
			fmt.Fprintln(s.out, "trusted "+trust.Quote(canon))
			return nil
		},
	}
	c.Flags().BoolVar(&list, "list", false, "list the trusted folders")
	c.Flags().BoolVarP(&yes, "yes", "y", false, "trust even the file system's root or your home folder")
	c.Flags().StringVar(&revoke, "revoke", "", "stop trusting `DIR` (exit 2 if it was not trusted)")
	return c
}

// noticeUntrusted says once, on stderr, which project files an untrusted
// workspace has that reins ignored, and how to trust it (cli.NoticeUntrusted).
func noticeUntrusted(s *streams, h *harness.Harness) { cli.NoticeUntrusted(s.err, h) }
