// Package models is reins's catalogue of models: the context window, output
// limit and price of the models users commonly name, overridden entry by
// entry by config `models:`. The agent compacts against a model's window
// and prices its usage here; `reins models` lists the same table.
package models

import (
	"maps"
	"slices"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm"
)

// Source says where an entry's figures came from.
type Source string

const (
	Builtin Source = "builtin"
	Config  Source = "config"
	Unknown Source = ""
)

// Info is one model's entry; a zero or nil field is unknown.
type Info struct {
	Spec   string // "<provider>/<model>"
	Source Source
	config.ModelInfo
}

func price(in, out, cacheRead, cacheWrite float64) config.ModelPrice {
	p := config.ModelPrice{Input: &in, Output: &out, CacheRead: &cacheRead}
	if cacheWrite >= 0 {
		p.CacheWrite = &cacheWrite
	}
	return p
}

// builtin is the small table reins starts from: windows, output limits and
// list prices (USD per million tokens) as the providers publish them. The
// OpenAI-compatible wires bill no cache writes (-1: none, so a cache write
// reported there prices as unknown). Prices change: config `models:`
// overrides any field, and a model not listed here works with -m all the
// same, with its window and price unknown.
var builtin = map[string]config.ModelInfo{
	"deepseek/deepseek-chat":      {ContextWindow: 128000, MaxOutput: 8192, Price: price(0.28, 0.42, 0.028, -1)},
	"deepseek/deepseek-reasoner":  {ContextWindow: 128000, MaxOutput: 65536, Price: price(0.28, 0.42, 0.028, -1)},
	"openai/gpt-4.1":              {ContextWindow: 1047576, MaxOutput: 32768, Price: price(2, 8, 0.5, -1)},
	"openai/gpt-4.1-mini":         {ContextWindow: 1047576, MaxOutput: 32768, Price: price(0.4, 1.6, 0.1, -1)},
	"openai/gpt-4o":               {ContextWindow: 128000, MaxOutput: 16384, Price: price(2.5, 10, 1.25, -1)},
	"openai/gpt-4o-mini":          {ContextWindow: 128000, MaxOutput: 16384, Price: price(0.15, 0.6, 0.075, -1)},
	"anthropic/claude-sonnet-4-5": {ContextWindow: 200000, MaxOutput: 64000, Price: price(3, 15, 0.3, 3.75)},
	"anthropic/claude-opus-4-1":   {ContextWindow: 200000, MaxOutput: 32000, Price: price(15, 75, 1.5, 18.75)},
	"anthropic/claude-haiku-4-5":  {ContextWindow: 200000, MaxOutput: 64000, Price: price(1, 5, 0.1, 1.25)},
	"mock/echo":                   {},
	"mock/demo":                   {},
}

// Lookup returns spec's entry: the built-in one with every field config
// sets replaced. cfg is config `models:` (nil: none).
func Lookup(cfg map[string]config.ModelInfo, spec string) Info {
	mi, ok := builtin[spec]
	src := Unknown
	if ok {
		src = Builtin
	}
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

// All returns the built-in entries and config's, merged, sorted by spec.
func All(cfg map[string]config.ModelInfo) []Info {
	specs := slices.Collect(maps.Keys(builtin))
	for s := range cfg {
		if _, ok := builtin[s]; !ok {
			specs = append(specs, s)
		}
	}
	slices.Sort(specs)
	out := make([]Info, 0, len(specs))
	for _, s := range specs {
		out = append(out, Lookup(cfg, s))
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
