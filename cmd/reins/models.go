package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reinsdev/reins/internal/catalog"
	"github.com/reinsdev/reins/internal/config"
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
	var refresh, asJSON bool
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
		all := models.All(h.Config.Models, h.Config.ListedModels())
		provs := providerRows(h)
		if asJSON {
			return writeModelsJSON(s, h, def, all, provs)
		}
		tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PROVIDER\tMODEL\tCONTEXT\tMAX OUTPUT\tPRICE IN/OUT $/Mtok\tSOURCE\tTOOLS")
		for _, r := range all {
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
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", termsafe.EscapeLine(prov), termsafe.EscapeLine(name), count(r.ContextWindow), count(r.MaxOutput), price, cmp.Or(string(r.Source), "-"), profileName(prov, model))
		}
		tw.Flush()
		fmt.Fprintln(s.out)
		tw = tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PROVIDER\tKIND\tWIRE\tBASE URL\tKEY")
		for _, p := range provs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termsafe.EscapeLine(p.Name), p.Kind, p.Wire, termsafe.EscapeLine(cmp.Or(p.BaseURL, "-")), termsafe.EscapeLine(p.keyText()))
		}
		tw.Flush()
		for _, a := range slices.Sorted(maps.Keys(h.Config.ModelAliases)) {
			fmt.Fprintln(s.out, "alias "+termsafe.EscapeLine(a)+" = "+termsafe.EscapeLine(h.Config.ModelAliases[a]))
		}
		for _, n := range catalog.ShortNames() {
			if p, m, err := catalog.Current().Resolve(n); err == nil {
				fmt.Fprintf(s.out, "short %s = %s/%s\n", n, p, m)
			}
		}
		fmt.Fprintln(s.out, "catalogue: "+termsafe.EscapeLine(catalog.Current().Source))
		return nil
	})
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object: models, providers (presets marked, with whether their key is set), aliases, short names")
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

// providerKind says where a provider comes from in `reins models`.
type providerKind string

const (
	kindBuiltin providerKind = "builtin" // config.Providers
	kindPreset  providerKind = "preset"  // config.Presets
	kindConfig  providerKind = "config"  // a name under providers: of the user's own
)

// providerRow is one provider of `reins models`: its wire, base URL and
// key variable, and whether the key is there. A key's value is never
// shown; a provider needing no key says so.
type providerRow struct {
	Name        string       `json:"name"`
	Kind        providerKind `json:"kind"`
	Preset      bool         `json:"preset"`
	Wire        string       `json:"wire"`
	BaseURL     string       `json:"baseURL,omitempty"`
	KeyEnv      string       `json:"keyEnv,omitempty"`
	KeySet      bool         `json:"keySet"`
	KeyOptional bool         `json:"keyOptional"`
}

func (p providerRow) keyText() string {
	switch {
	case p.KeyEnv == "" && p.KeySet:
		return "in config"
	case p.KeyEnv == "":
		return "none needed"
	case p.KeySet:
		return p.KeyEnv + " (set)"
	case p.KeyOptional:
		return p.KeyEnv + " (not set; optional)"
	}
	return p.KeyEnv + " (not set)"
}

// providerRows are every provider but the mock: built-ins, presets, the
// config's own.
func providerRows(h *harness.Harness) []providerRow {
	none := func(string) string { return "" }
	var out []providerRow
	for _, name := range h.Config.ProviderNames() {
		pc := h.Config.Provider(name)
		if pc.Wire == config.WireMock {
			continue
		}
		kind := kindConfig
		switch {
		case slices.Contains(config.Providers, name):
			kind = kindBuiltin
		case slices.Contains(config.Presets, name):
			kind = kindPreset
		}
		env := h.Config.KeyEnv(name)
		out = append(out, providerRow{
			Name: name, Kind: kind, Preset: kind == kindPreset, Wire: pc.Wire, BaseURL: pc.BaseURL, KeyEnv: env,
			KeySet:      pc.APIKey != "" || env != "" && h.Getenv(env) != "",
			KeyOptional: h.Config.MissingKey(name, none) == "",
		})
	}
	return out
}

// modelRow is one model of `reins models --json`; a nil figure is unknown.
type modelRow struct {
	Provider      string   `json:"provider"`
	Model         string   `json:"model"`
	Default       bool     `json:"default,omitempty"`
	ContextWindow int      `json:"contextWindow,omitempty"`
	MaxOutput     int      `json:"maxOutput,omitempty"`
	PriceIn       *float64 `json:"priceInput,omitempty"`
	PriceOut      *float64 `json:"priceOutput,omitempty"`
	Source        string   `json:"source,omitempty"`
	Tools         string   `json:"tools"`
}

func writeModelsJSON(s *streams, h *harness.Harness, def string, all []models.Info, provs []providerRow) error {
	out := struct {
		Default   string            `json:"default"`
		Models    []modelRow        `json:"models"`
		Providers []providerRow     `json:"providers"`
		Aliases   map[string]string `json:"aliases"`
		Short     map[string]string `json:"short"`
		Catalogue string            `json:"catalogue"`
	}{Default: def, Models: make([]modelRow, 0, len(all)), Providers: provs, Aliases: h.Config.ModelAliases, Short: map[string]string{}, Catalogue: catalog.Current().Source}
	for _, r := range all {
		prov, name, _ := strings.Cut(r.Spec, "/")
		out.Models = append(out.Models, modelRow{Provider: prov, Model: name, Default: r.Spec == def, ContextWindow: r.ContextWindow, MaxOutput: r.MaxOutput,
			PriceIn: r.Price.Input, PriceOut: r.Price.Output, Source: string(r.Source), Tools: profileName(prov, name)})
	}
	for _, n := range catalog.ShortNames() {
		if p, m, err := catalog.Current().Resolve(n); err == nil {
			out.Short[n] = p + "/" + m
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = s.out.Write(append(b, '\n'))
	return err
}
