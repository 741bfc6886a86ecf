package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/trust"
	"github.com/spf13/cobra"
)

// newTrustCmd is `reins trust [DIR]`, `reins trust --list`, `reins trust
// --show [DIR]` and `reins trust --revoke DIR`: the folders whose own files
// reins uses, and the content of those files the user approved (pins).
// Everything is kept in $REINS_HOME/trusted.json by internal/trust.
func newTrustCmd(s *streams) *cobra.Command {
	var (
		list   bool
		show   bool
		revoke string
		yes    bool
	)
	c := &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Trust a folder and approve its project files, so that they take effect",
		Long: "Trust DIR (default: the current directory) and every folder below it: reins then uses its\n" +
			".reins config and agents, .mcp.json, .claude agents and settings, AGENTS.md and CLAUDE.md, at\n" +
			"any depth. In a folder you have not trusted, reins ignores them, because they can start programs,\n" +
			"choose where your API keys are sent and steer the model. Trusting pins each file's content:\n" +
			"one added or changed later is not used until you run reins trust again (--show lists them).\n" +
			"The list is kept in $REINS_HOME/trusted.json.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store := trust.New(harness.DefaultHome(os.Getenv))
			revoking := cmd.Flags().Changed("revoke")
			switch {
			case list && (revoking || len(args) > 0 || show):
				return &exitError{Code: exitUsage, Msg: "trust --list takes no folder"}
			case show && revoking:
				return &exitError{Code: exitUsage, Msg: "trust --show and --revoke do not go together"}
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
			home := harness.DefaultHome(os.Getenv)
			opts := scanOptions(home, dir)
			if show {
				sh, err := store.Show(cmd.Context(), dir, opts)
				if err != nil {
					return trustError(dir, err)
				}
				printShown(s, sh)
				return nil
			}
			if err := wideTrust(dir, yes); err != nil {
				return err
			}
			a, err := store.Approve(cmd.Context(), dir, opts)
			if err != nil {
				return trustError(dir, err)
			}
			fmt.Fprintln(s.out, "trusted "+trust.Quote(a.Folder))
			for _, c := range a.Changes {
				fmt.Fprintf(s.out, "  %-10s %s\n", c.State, trust.Quote(c.Path))
			}
			plural := "s"
			if a.Pinned == 1 {
				plural = ""
			}
			fmt.Fprintf(s.out, "%d project file%s pinned\n", a.Pinned, plural)
			if a.Truncated {
				fmt.Fprintf(s.err, "reins: trust: the scan of %s stopped at its bound (%d entries, %d folders deep, %d files): project files past it are not pinned, and reins will not use them; trust the project folder you work in instead\n",
					trust.Quote(a.Folder), trust.MaxScanEntries, trust.MaxScanDepth, trust.MaxPins)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&list, "list", false, "list the trusted folders")
	c.Flags().BoolVar(&show, "show", false, "list the project files of DIR's trusted folder: pinned, changed, new or removed")
	c.Flags().BoolVarP(&yes, "yes", "y", false, "trust even the file system's root or your home folder")
	c.Flags().StringVar(&revoke, "revoke", "", "stop trusting `DIR` (exit 2 if it was not trusted)")
	return c
}

// noticeUntrusted says once, on stderr, which project files an untrusted
// workspace has that reins ignored, and how to trust it (cli.NoticeUntrusted).
func noticeUntrusted(s *streams, h *harness.Harness) { cli.NoticeUntrusted(s.err, h) }

// trustError maps an error of trusting or showing dir to an exit.
func trustError(dir string, err error) error {
	var ce *trust.CorruptError
	switch {
	case errors.As(err, &ce):
		return &exitError{Code: exitUsage, Msg: err.Error()}
	case errors.Is(err, os.ErrNotExist):
		return &exitError{Code: exitUsage, Msg: "trust: no such folder: " + trust.Quote(dir)}
	}
	return &exitError{Code: exitUsage, Msg: "trust: " + err.Error()}
}

// scanOptions are the pinning scan's options for dir: the instruction
// file names the user's config and dir's own config add to AGENTS.md and
// CLAUDE.md (read here unpinned: this is the user approving them).
func scanOptions(home, dir string) trust.ScanOptions {
	opts := trust.ScanOptions{Home: home}
	if cfg, err := config.Load(config.LoadOptions{Home: home, Cwd: dir, Trusted: true}); err == nil {
		opts.Names = cfg.InstructionFiles
	}
	return opts
}

// printShown writes `reins trust --show`: the folder, then one line per
// file, its state and its path relative to the folder.
func printShown(s *streams, sh *trust.Shown) {
	if sh.Trusted {
		fmt.Fprintln(s.out, "trusted "+trust.Quote(sh.Folder))
	} else {
		fmt.Fprintln(s.out, "not trusted "+trust.Quote(sh.Folder)+" (reins trust would pin the files below)")
	}
	for _, f := range sh.Files {
		fmt.Fprintf(s.out, "  %-10s %s\n", f.State, trust.Quote(f.Path))
	}
	if len(sh.Files) == 0 {
		fmt.Fprintln(s.out, "  no project files")
	}
	if sh.Truncated {
		fmt.Fprintf(s.out, "  (the scan stopped at its bound: files past it are not listed, and not used)\n")
	}
}
