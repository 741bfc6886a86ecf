package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/view"
	"github.com/spf13/cobra"
)

func newViewCmd(s *streams) *cobra.Command {
	var (
		export string
		noOpen bool
		port   int
	)
	c := &cobra.Command{
		Use:   "view [SESSION]",
		Short: cli.ExtraShort("view"),
		Long: "view serves a page on loopback (a free port, a random token in the address) listing\n" +
			"the sessions, or showing SESSION with its whole tree; a running session updates live.\n" +
			"The address is printed and opened with xdg-open when there is one (--no-open: don't).\n" +
			"--export FILE.html writes the session as one self-contained HTML file instead.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cli.SessionsRoot()
			id := ""
			if len(args) == 1 {
				var err error
				if id, err = cli.ResolveSession(root, args[0]); err != nil {
					return err
				}
			}
			if export != "" {
				if id == "" {
					return &cli.ExitError{Code: cli.ExitUsage, Msg: "--export: name the SESSION to export"}
				}
				if err := exportFile(export, root, id); err != nil {
					return &cli.ExitError{Code: cli.ExitFailed, Msg: "--export: " + err.Error()}
				}
				fmt.Fprintf(s.out, "wrote %s\n", export)
				return nil
			}
			if port < 0 || port > 65535 {
				return &cli.ExitError{Code: cli.ExitUsage, Msg: "--port: want 0 to 65535"}
			}
			token, err := view.NewToken()
			if err != nil {
				return err
			}
			l, err := view.Listen(port)
			if err != nil {
				return &cli.ExitError{Code: cli.ExitFailed, Msg: err.Error()}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			url := view.URL(l, token, id)
			fmt.Fprintf(s.out, "reins view on %s (Ctrl-C stops it)\n", url)
			if !noOpen {
				go func() {
					if err := view.Open(ctx, url); err != nil && !errors.Is(err, view.ErrNoOpener) && ctx.Err() == nil {
						fmt.Fprintln(s.err, "reins: could not open a browser; open the address above")
					}
				}()
			}
			return view.Serve(ctx, l, view.NewServer(root, token, view.Options{}).Handler())
		},
	}
	c.Flags().StringVar(&export, "export", "", "write SESSION as one self-contained HTML file and exit")
	c.Flags().BoolVar(&noOpen, "no-open", false, "print the address only; don't start a browser")
	c.Flags().IntVar(&port, "port", 0, "the loopback port to listen on (0: a free one)")
	return c
}

// exportFile writes the export next to path and renames it into place, so
// an interrupted export never leaves half a file under the name asked for.
func exportFile(path, root, id string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".reins-view-*.html")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	w := bufio.NewWriter(f)
	err = view.Export(w, root, id, time.Now())
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
