package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/reinsdev/reins/internal/agenthome"
	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/trust"
	"github.com/spf13/cobra"
)

func newAgentsCmd(s *streams) *cobra.Command {
	c := agentsListCmd(s)
	c.AddCommand(newAgentsAddCmd(s))
	return c
}

// newAgentsAddCmd is `reins agents add NAME`: the agent file of a known
// agent (internal/agenthome), written to $REINS_HOME/agents/NAME.md, where
// every project sees it without trusting anything.
func newAgentsAddCmd(s *streams) *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "add NAME",
		Short: "Write the agent file of a known agent (" + knownAgentNames() + ") to $REINS_HOME/agents",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			a, ok := agenthome.ByName(args[0])
			if !ok {
				return &exitError{Code: exitUsage, Msg: fmt.Sprintf("agents add: unknown agent %q; known: %s", termsafe.EscapeLine(args[0]), knownAgentNames())}
			}
			dir := filepath.Join(config.Home(os.Getenv), "agents")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return err
			}
			path := filepath.Join(dir, a.Name+".md")
			flag := os.O_WRONLY | os.O_CREATE | os.O_EXCL
			if force {
				flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			}
			f, err := os.OpenFile(path, flag, 0o600)
			if errors.Is(err, fs.ErrExist) {
				return &exitError{Code: exitUsage, Msg: fmt.Sprintf("agents add: %s exists; --force replaces it", path)}
			}
			if err != nil {
				return err
			}
			if _, err := f.WriteString(a.File); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			fmt.Fprintf(s.out, "wrote %s\n", path)
			fmt.Fprintf(s.out, "%s keeps its state in %s\n", a.Name, filepath.Join(dir, a.Name))
			return nil
		},
	}
	c.Flags().BoolVar(&force, "force", false, "replace an existing file")
	return c
}

func knownAgentNames() string {
	var names []string
	for _, a := range agenthome.Known() {
		names = append(names, a.Name)
	}
	return strings.Join(names, ", ")
}

func agentsListCmd(s *streams) *cobra.Command {
	return listingCmd(s, "agents", "List the agent definitions found, with where each came from", func(h *harness.Harness) error {
		tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tPROVIDER\tMODEL\tSOURCE\tDESCRIPTION")
		for _, a := range h.Agents.List() {
			model := a.Model
			if model == "" {
				model = "(parent's)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cell(a.Name), cell(a.Provider), cell(model), cell(a.Source), cell(termsafe.Clip(a.Description, 60)))
		}
		// An untrusted folder's files are listed so the user sees what
		// exists, but only by what cannot mislead: a checked name, the
		// provider and the quoted path, never the file's description.
		for _, a := range h.Agents.Ignored() {
			name, prov := a.Name, a.Provider
			if name == "" {
				name, prov = "?", "?"
			}
			fmt.Fprintf(tw, "%s\t%s\t-\t%s\tuntrusted: not used until 'reins trust'\n", cell(name), cell(prov), trust.Quote(a.Source))
		}
		tw.Flush()
		for _, w := range h.Warnings {
			fmt.Fprintln(s.err, "warning: "+termsafe.Escape(w.String()))
		}
		return nil
	})
}

// cell is one table cell: escaped for the terminal, tabs and newlines
// included, so a field cannot shift the columns.
func cell(s string) string { return termsafe.EscapeLine(s) }

// warnBroken prints one stderr line for each agent file that was skipped
// because it could not be read as an agent (cli.WarnBroken).
func warnBroken(s *streams, h *harness.Harness) { cli.WarnBroken(s.err, h) }
