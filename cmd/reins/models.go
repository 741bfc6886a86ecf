package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/models"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/spf13/cobra"
)

func newModelsCmd(s *streams) *cobra.Command {
	return listingCmd(s, "models", "List known models per provider (built in, and config models:)", func(h *harness.Harness) error {
		def := h.Config.Model
		if target, ok := h.Config.ModelAliases[def]; ok {
			def = target
		}
		tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PROVIDER\tMODEL\tCONTEXT\tMAX OUTPUT\tPRICE IN/OUT $/Mtok\tSOURCE")
		for _, r := range models.All(h.Config.Models) {
			prov, name, _ := strings.Cut(r.Spec, "/")
			if r.Spec == def {
				name += " (default)"
			}
			price := "-"
			if p := r.Price; p.Input != nil || p.Output != nil {
				price = num(p.Input) + "/" + num(p.Output)
			}
			// Names come from config files (a repository's too): escaped,
			// tabs included, so they can neither drive the terminal nor
			// shift the columns.
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", termsafe.EscapeLine(prov), termsafe.EscapeLine(name), count(r.ContextWindow), count(r.MaxOutput), price, r.Source)
		}
		tw.Flush()
		aliases := make([]string, 0, len(h.Config.ModelAliases))
		for a, t := range h.Config.ModelAliases {
			aliases = append(aliases, termsafe.EscapeLine(a)+" = "+termsafe.EscapeLine(t))
		}
		slices.Sort(aliases)
		for _, a := range aliases {
			fmt.Fprintln(s.out, "alias "+a)
		}
		return nil
	})
}

func count(n int) string {
	if n <= 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

func num(f *float64) string {
	if f == nil {
		return "?"
	}
	return strconv.FormatFloat(*f, 'f', -1, 64)
}
