package models

import (
	"math"
	"testing"

	"github.com/reinsdev/reins/internal/catalog"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm"
)

func f(x float64) *float64 { return &x }

func TestCost(t *testing.T) {
	sonnet := Lookup(nil, "anthropic/claude-sonnet-4-5").Price
	deepseek := Lookup(nil, "deepseek/deepseek-chat").Price
	tests := []struct {
		name  string
		price config.ModelPrice
		u     llm.Usage
		want  *float64 // nil: unknown
	}{
		// 1000 uncached in at $3, 2000 read at $0.30, 500 written at $3.75, 100 out at $15.
		{"sonnet with cache", sonnet, llm.Usage{InputTokens: 3500, CacheReadTokens: 2000, CacheWriteTokens: 500, OutputTokens: 100},
			f((1000*3 + 2000*0.3 + 500*3.75 + 100*15) / 1e6)},
		{"deepseek cache hit", deepseek, llm.Usage{InputTokens: 1000, CacheReadTokens: 600, OutputTokens: 10},
			f((400*0.28 + 600*0.028 + 10*0.42) / 1e6)},
		{"cache write on a wire without one", deepseek, llm.Usage{InputTokens: 10, CacheWriteTokens: 5}, nil},
		{"no price", config.ModelPrice{}, llm.Usage{InputTokens: 1}, nil},
		{"no tokens no price", config.ModelPrice{}, llm.Usage{}, f(0)},
		{"output price only, output only", config.ModelPrice{Output: f(2)}, llm.Usage{OutputTokens: 1e6}, f(2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Cost(tt.price, tt.u)
			if (got == nil) != (tt.want == nil) || (got != nil && math.Abs(*got-*tt.want) > 1e-12) {
				t.Errorf("Cost = %v, want %v", deref(got), deref(tt.want))
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return "unknown"
	}
	return *p
}

func TestLookupOverrides(t *testing.T) {
	cfg := map[string]config.ModelInfo{
		"anthropic/claude-sonnet-4-5": {ContextWindow: 8000, Price: config.ModelPrice{Output: f(1)}},
		"local/tiny":                  {ContextWindow: 4096},
	}
	s := Lookup(cfg, "anthropic/claude-sonnet-4-5")
	if s.Source != Config || s.ContextWindow != 8000 || s.MaxOutput != 64000 || *s.Price.Output != 1 || *s.Price.Input != 3 {
		t.Errorf("override: %+v", s)
	}
	if l := Lookup(cfg, "local/tiny"); l.Source != Config || l.ContextWindow != 4096 || l.Price.Input != nil {
		t.Errorf("config only: %+v", l)
	}
	if u := Lookup(cfg, "nobody/none"); u.Source != Unknown || u.ContextWindow != 0 {
		t.Errorf("unknown: %+v", u)
	}
	// The built-in table is never changed by an override.
	if b := Lookup(nil, "anthropic/claude-sonnet-4-5"); *b.Price.Output != 15 || b.ContextWindow != 200000 {
		t.Errorf("builtin mutated: %+v", b)
	}
	// Both config entries are rows of their own: the undated sonnet id
	// is the name the user gave.
	all := All(cfg, nil)
	if want := len(catalog.Current().Models) + len(builtin.Get()) + 2; len(all) != want {
		t.Errorf("All: %d entries, want %d", len(all), want)
	}
	if all[len(all)-1].Spec != "mock/echo" && all[len(all)-1].Spec != "local/tiny" {
		t.Errorf("All: the catalogue's entries come first, then the rest sorted: last is %s", all[len(all)-1].Spec)
	}
}

// TestFromCatalog: prices, windows and output limits come from the
// catalogue, including a model the old hand table never had.
func TestFromCatalog(t *testing.T) {
	for _, m := range catalog.Current().Models {
		i := Lookup(nil, m.Spec())
		if i.Source != Catalog || i.ContextWindow != m.ContextWindow || i.MaxOutput != m.MaxOutput || i.Price.Input != m.Input {
			t.Fatalf("%s: %+v, catalogue %+v", m.Spec(), i, m)
		}
	}
	sonnet := Lookup(nil, "anthropic/claude-sonnet-4-6")
	if sonnet.Source != Catalog || sonnet.ContextWindow == 0 || sonnet.Price.Input == nil || sonnet.Price.CacheWrite == nil {
		t.Errorf("sonnet 4.6: %+v", sonnet)
	}
}

// TestAllListedFirst: the models the config's providers list come first,
// in their order, once each, marked config where nothing else knows them.
func TestAllListedFirst(t *testing.T) {
	listed := []string{"mygw/small", "anthropic/claude-sonnet-4-5", "mygw/small"}
	all := All(nil, listed)
	if len(all) < 2 || all[0].Spec != "mygw/small" || all[0].Source != Config || all[1].Spec != "anthropic/claude-sonnet-4-5" || all[1].Source != Catalog {
		t.Fatalf("first entries: %+v", all[:min(3, len(all))])
	}
	n := 0
	for _, in := range all {
		if in.Spec == "anthropic/claude-sonnet-4-5" || in.Spec == "mygw/small" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("listed models appear %d times, want once each", n)
	}
}
