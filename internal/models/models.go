// Package models is reins's table of models: the context window, output
// limit and price of each model, from the model catalogue
// (internal/catalog: catwalk's data, embedded or refreshed), overridden
// entry by entry by config `models:`. The agent compacts against a model's
// window and prices its usage here; budgets and `/cost` use the same
// prices, and `reins models` lists the same table.
package models

import (
	"maps"
	"slices"

	"github.com/reinsdev/reins/internal/catalog"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/llm"
)

// Source says where an entry's figures came from.
type Source string

const (
	Catalog Source = "catalog" // the model catalogue
	Builtin Source = "builtin" // reins's own few entries (builtin.Get())
	Config  Source = "config"  // config `models:` set a field
	Unknown Source = ""
)

// Info is one model's entry; a zero or nil field is unknown.
type Info struct {
	Spec   string // "<provider>/<model>"
	Source Source
	config.ModelInfo
}

func price(in, out, cacheRead float64) config.ModelPrice {
	return config.ModelPrice{Input: &in, Output: &out, CacheRead: &cacheRead}
}

// builtin are the models reins names that the catalogue does not list:
// DeepSeek's long-standing deepseek-chat (the default model, SPEC §1) and
// deepseek-reasoner (what --effort picks for it), and the keyless mock
// models. DeepSeek bills no cache writes (nil: a cache write prices as
// unknown).
var builtin = lazy.Value[map[string]config.ModelInfo]{New: func() map[string]config.ModelInfo {
	return map[string]config.ModelInfo{
		"deepseek/deepseek-chat":     {ContextWindow: 128000, MaxOutput: 8192, Price: price(0.28, 0.42, 0.028)},
		"deepseek/deepseek-reasoner": {ContextWindow: 128000, MaxOutput: 65536, Price: price(0.28, 0.42, 0.028)},
		"mock/echo":                  {},
		"mock/demo":                  {},
	}
}}

// base is spec's entry before config: reins's own, else the catalogue's
// (an undated id finds its dated release there).
func base(spec string) (config.ModelInfo, Source) {
	if mi, ok := builtin.Get()[spec]; ok {
		return mi, Builtin
	}
	prov, id, ok := splitSpec(spec)
	if !ok {
		return config.ModelInfo{}, Unknown
	}
	m, ok := catalog.Current().Lookup(prov, id)
	if !ok {
		return config.ModelInfo{}, Unknown
	}
	return fromCatalog(m), Catalog
}

func fromCatalog(m catalog.Model) config.ModelInfo {
	return config.ModelInfo{ContextWindow: m.ContextWindow, MaxOutput: m.MaxOutput,
		Price: config.ModelPrice{Input: m.Input, Output: m.Output, CacheRead: m.CacheRead, CacheWrite: m.CacheWrite}}
}

func splitSpec(spec string) (prov, id string, ok bool) {
	for i := range len(spec) {
		if spec[i] == '/' {
			return spec[:i], spec[i+1:], i > 0 && i < len(spec)-1
		}
	}
	return "", "", false
}

// Lookup returns spec's entry: the catalogue's (or reins's own) with every
// field config sets replaced. cfg is config `models:` (nil: none).
func Lookup(cfg map[string]config.ModelInfo, spec string) Info {
	mi, src := base(spec)
	if c, ok := cfg[spec]; ok {
		src = Config
		if c.ContextWindow > 0 {
			mi.ContextWindow = c.ContextWindow
		}
		if c.MaxOutput > 0 {
			mi.MaxOutput = c.MaxOutput
		}
		p := &mi.Price
		for _, f := range []struct {
			dst **float64
			src *float64
		}{
			{&p.Input, c.Price.Input}, {&p.Output, c.Price.Output},
			{&p.CacheRead, c.Price.CacheRead}, {&p.CacheWrite, c.Price.CacheWrite},
		} {
			if f.src != nil {
				*f.dst = f.src
			}
		}
	}
	return Info{Spec: spec, Source: src, ModelInfo: mi}
}

// All returns the catalogue's models, reins's own and config's, merged:
// the catalogue's in its order (each provider's newest first), then the
// rest sorted by spec. listed are the models the config's providers list
// (config.Config.ListedModels): they come first, in their order, marked
// Config where nothing else knows them.
func All(cfg map[string]config.ModelInfo, listed []string) []Info {
	var specs []string
	seen := map[string]bool{}
	for _, m := range catalog.Current().Models {
		if s := m.Spec(); !seen[s] {
			seen[s] = true
			specs = append(specs, s)
		}
	}
	var rest []string
	for _, s := range slices.Concat(slices.Collect(maps.Keys(builtin.Get())), slices.Collect(maps.Keys(cfg))) {
		if !seen[s] {
			seen[s] = true
			rest = append(rest, s)
		}
	}
	slices.Sort(rest)
	out := make([]Info, 0, len(listed)+len(specs)+len(rest))
	for _, s := range listed {
		if !slices.ContainsFunc(out, func(in Info) bool { return in.Spec == s }) {
			in := Lookup(cfg, s)
			if in.Source == Unknown {
				in.Source = Config
			}
			out = append(out, in)
		}
	}
	for _, s := range slices.Concat(specs, rest) {
		if !slices.Contains(listed, s) {
			out = append(out, Lookup(cfg, s))
		}
	}
	return out
}

// Cost prices u at p: InputTokens less the cache reads and writes at the
// input price, the cache reads and writes at theirs, OutputTokens (which
// include reasoning) at the output price. It returns nil, unknown, when a
// price that u needs is missing: an unknown price is never taken as 0.
func Cost(p config.ModelPrice, u llm.Usage) *float64 {
	var usd float64
	for _, part := range []struct {
		tokens int
		price  *float64
	}{
		{u.InputTokens - u.CacheReadTokens - u.CacheWriteTokens, p.Input},
		{u.CacheReadTokens, p.CacheRead},
		{u.CacheWriteTokens, p.CacheWrite},
		{u.OutputTokens, p.Output},
	} {
		if part.tokens <= 0 {
			continue
		}
		if part.price == nil {
			return nil
		}
		usd += float64(part.tokens) * *part.price / 1e6
	}
	return &usd
}
