package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/trust"
	"github.com/spf13/cobra"
)

func newAgentsCmd(s *streams) *cobra.Command {
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
