package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/reinsdev/reins/internal/config"
	"github.com/spf13/cobra"
)

// knownModels is the small built-in table `reins models` starts from:
// models a user commonly names, with their context window and output
// limit as the providers publish them. Prices are left to config
// `models:` (they change); any model a provider serves works with -m
// whether listed or not.
var knownModels = []struct {
	spec               string
	context, maxOutput int
}{
	{"deepseek/deepseek-chat", 128000, 8192},
	{"deepseek/deepseek-reasoner", 128000, 65536},
	{"openai/gpt-4.1", 1047576, 32768},
	{"openai/gpt-4.1-mini", 1047576, 32768},
	{"openai/gpt-4o", 128000, 16384},
	{"openai/gpt-4o-mini", 128000, 16384},
	{"anthropic/claude-sonnet-4-5", 200000, 64000},
	{"anthropic/claude-opus-4-1", 200000, 32000},
	{"anthropic/claude-haiku-4-5", 200000, 64000},
	{"mock/echo", 0, 0},
	{"mock/demo", 0, 0},
}

func newModelsCmd(s *streams) *cobra.Command {
	var f listingFlags
	c := &cobra.Command{
		Use:   "models",
		Short: "List known models per provider (built in, and config models:)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			h, err := f.open(s)
			if err != nil {
				return err
			}
			defer h.Close()
			type row struct {
				spec   string
				info   config.ModelInfo
				source string
			}
			rows := map[string]*row{}
			for _, k := range knownModels {
				rows[k.spec] = &row{spec: k.spec, info: config.ModelInfo{ContextWindow: k.context, MaxOutput: k.maxOutput}, source: "builtin"}
			}
			for spec, mi := range h.Config.Models {
				r, ok := rows[spec]
				if !ok {
					r = &row{spec: spec}
					rows[spec] = r
				}
				if mi.ContextWindow > 0 {
					r.info.ContextWindow = mi.ContextWindow
				}
				if mi.MaxOutput > 0 {
					r.info.MaxOutput = mi.MaxOutput
				}
				r.info.Price = mi.Price
				r.source = "config"
			}
			specs := make([]string, 0, len(rows))
			for k := range rows {
				specs = append(specs, k)
			}
			slices.Sort(specs)
			def := h.Config.Model
			if target, ok := h.Config.ModelAliases[def]; ok {
				def = target
			}
			tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PROVIDER\tMODEL\tCONTEXT\tMAX OUTPUT\tPRICE IN/OUT $/Mtok\tSOURCE")
			for _, spec := range specs {
				r := rows[spec]
				prov, name, _ := strings.Cut(spec, "/")
				if spec == def {
					name += " (default)"
				}
				price := "-"
				if p := r.info.Price; p.Input != nil || p.Output != nil {
					price = num(p.Input) + "/" + num(p.Output)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", prov, name, count(r.info.ContextWindow), count(r.info.MaxOutput), price, r.source)
			}
			tw.Flush()
			aliases := make([]string, 0, len(h.Config.ModelAliases))
			for a, t := range h.Config.ModelAliases {
				aliases = append(aliases, a+" = "+t)
			}
			slices.Sort(aliases)
			for _, a := range aliases {
				fmt.Fprintln(s.out, "alias "+a)
			}
			return nil
		},
	}
	f.register(c.Flags())
	return c
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
