package main

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reinsdev/reins/internal/catalog"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/models"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/spf13/cobra"
)

// catalogURLEnv overrides where `reins models --refresh` fetches the
// catalogue from (catwalk's /v2/providers under it).
const catalogURLEnv = "REINS_CATALOG_URL"

func newModelsCmd(s *streams) *cobra.Command {
	var refresh bool
	c := listingCmd(s, "models", "List the model catalogue per provider (embedded or refreshed, and config models:)", func(h *harness.Harness) error {
		if refresh {
			url := cmp.Or(h.Getenv(catalogURLEnv), catalog.DefaultURL)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c, err := catalog.Refresh(ctx, url, harness.CatalogFile(h.Home))
			if err != nil {
				return &exitError{Code: exitFailed, Msg: "models --refresh from " + termsafe.EscapeLine(url) + ": " + termsafe.EscapeLine(err.Error()) + " (the catalogue in use is unchanged)"}
			}
			fmt.Fprintf(s.err, "reins: %d models fetched from %s into %s\n", len(c.Models), termsafe.EscapeLine(url), harness.CatalogFile(h.Home))
		}
		def, _ := h.DefaultModel()
		if p, m, err := h.Config.ResolveModel(def); err == nil {
			def = p + "/" + m
			if cm, ok := catalog.Current().Lookup(p, m); ok {
				def = cm.Spec() // an undated id marks its dated release
			}
		}
		tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PROVIDER\tMODEL\tCONTEXT\tMAX OUTPUT\tPRICE IN/OUT $/Mtok\tSOURCE\tTOOLS")
		for _, r := range models.All(h.Config.Models) {
			prov, name, _ := strings.Cut(r.Spec, "/")
			model := name
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
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", termsafe.EscapeLine(prov), termsafe.EscapeLine(name), count(r.ContextWindow), count(r.MaxOutput), price, r.Source, profileName(prov, model))
		}
		tw.Flush()
		aliases := make([]string, 0, len(h.Config.ModelAliases))
		for a, t := range h.Config.ModelAliases {
			aliases = append(aliases, termsafe.EscapeLine(a)+" = "+termsafe.EscapeLine(t))
		}
		slices.Sort(aliases)
		for _, a := range aliases {
			fmt.Fprintln(s.out, "alias "+termsafe.EscapeLine(a))
		}
		short := catalog.ShortNames()
		for _, n := range short {
			if p, m, err := catalog.Current().Resolve(n); err == nil {
				fmt.Fprintf(s.out, "short %s = %s/%s\n", n, p, m)
			}
		}
		fmt.Fprintln(s.out, "catalogue: "+termsafe.EscapeLine(catalog.Current().Source))
		return nil
	})
	c.Flags().BoolVar(&refresh, "refresh", false, "fetch the current catalogue from the network into $REINS_HOME/models.json first ("+catalogURLEnv+" overrides "+catalog.DefaultURL+")")
	return c
}

// profileName is the tool profile a session on provider/model is offered
// when its agent file names none (tool.ProfileFor): the TOOLS column.
func profileName(provider, model string) string {
	return cmp.Or(string(tool.ProfileFor(tool.ProfileDefault, provider, model)), "default")
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
	// The catalogue's JSON has float artefacts (0.39999999999999997).
	return strconv.FormatFloat(math.Round(*f*1e6)/1e6, 'f', -1, 64)
}
