package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/trust"
	"github.com/spf13/cobra"
)

// newHooksCmd is `reins hooks`: the hooks this folder's sessions run
// (docs/hooks.md), with where each came from and whether it runs
// confined; what was skipped is a warning on stderr.
func newHooksCmd(s *streams) *cobra.Command {
	return listingCmd(s, "hooks", "List the hooks (Claude Code's format) sessions here run, with where each came from", func(h *harness.Harness) error {
		tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "EVENT\tMATCHER\tCOMMAND\tTIMEOUT\tRUNS\tSOURCE")
		for _, hk := range h.Hooks.Hooks {
			matcher := hk.Matcher
			if matcher == "" {
				matcher = "*"
			}
			runs := "confined"
			if hk.User && h.Hooks.Unconfined {
				runs = "unconfined"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cell(string(hk.Event)), cell(matcher), cell(termsafe.Clip(hk.Command, 60)), hk.Timeout, runs, trust.Quote(hk.Source))
		}
		tw.Flush()
		for _, w := range h.Hooks.Warnings {
			fmt.Fprintln(s.err, "warning: "+termsafe.Escape(w))
		}
		return nil
	})
}
