package harness

import (
	"context"
	"fmt"
	"iter"
	"path/filepath"
	"slices"

	"github.com/reinsdev/reins/internal/catalog"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/llm"
)

// keyEnvs are the key variables of the providers SPEC §12 picks from, for
// a provider whose adapter this build may lack (gemini): its key can still
// be noticed, and the pick then fails with available's clear error.
var keyEnvs = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		"anthropic": "ANTHROPIC_API_KEY",
		"openai":    "OPENAI_API_KEY",
		"deepseek":  "DEEPSEEK_API_KEY",
		"gemini":    "GEMINI_API_KEY",
	}
}}

// DefaultModel is the model of a session given no -m: config `model`
// when a layer sets it; else, SPEC §12, the first provider in the order
// anthropic, openai, deepseek, gemini whose key is set (its environment
// variable, or providers.NAME.apiKey) with the catalogue's default model
// for it (deepseek's is config.DefaultModel, the model reins has always
// defaulted to); else config.DefaultModel. why says how a key chose it,
// for the line reins prints at start ("" when the config or the fallback
// did).
func (h *Harness) DefaultModel() (spec, why string) {
	if h.Config.ModelFrom != "" {
		return h.Config.Model, ""
	}
	for _, p := range catalog.Providers {
		_, env, _, _ := config.ProviderDefaults(p)
		if env == "" {
			env = keyEnvs.Get()[p]
		}
		var from string
		switch {
		case env != "" && h.Getenv(env) != "":
			from = env + " is set"
		case h.Config.Provider(p).APIKey != "":
			from = "providers." + p + ".apiKey is set"
		default:
			continue
		}
		id := catalog.Current().Default(p)
		if p == "deepseek" || id == "" {
			if prov, m, err := h.Config.ResolveModel(config.DefaultModel); err == nil && prov == p {
				id = m
			}
		}
		if id == "" {
			continue
		}
		return p + "/" + id, from + "; no -m and no config model"
	}
	return h.Config.Model, ""
}

// available is a clear error for a provider the catalogue knows but this
// build has no adapter for (nil for any other name: the config's own
// error says what is wrong with it).
func available(provider string) error {
	if slices.Contains(catalog.Providers, provider) && !slices.Contains(config.Providers, provider) {
		return fmt.Errorf("provider %s is not available in this build", provider)
	}
	return nil
}

// effortModel is DeepSeek's effort knob: its reasoning is a model of its
// own, so any effort turns deepseek-chat into deepseek-reasoner.
func effortModel(provider, name string, effort llm.Effort) string {
	if provider == "deepseek" && name == "deepseek-chat" && effort != "" {
		return "deepseek-reasoner"
	}
	return name
}

// withEffort makes every request through m carry effort, which the wire's
// adapter maps to its own field. DeepSeek's effort is its model choice
// (effortModel), so its requests carry none.
func withEffort(m llm.Model, provider string, effort llm.Effort) llm.Model {
	if effort == "" || provider == "deepseek" || m == nil {
		return m
	}
	return llm.ModelFunc(func(ctx context.Context, req *llm.Request) iter.Seq[llm.Chunk] {
		r := *req
		r.Effort = effort
		return m.Stream(ctx, &r)
	})
}

// withImages makes every request through m say that the model takes
// images (llm.Request.Images) when the catalogue lists it with image
// input. A model the catalogue does not know (a local server's, a new
// name) is sent the text note instead: a text-only server rejects a
// request with an image in it, while a note costs one turn's eyesight.
func withImages(m llm.Model, provider, name string) llm.Model {
	if cm, ok := catalog.Current().Lookup(provider, name); !ok || !cm.Images || m == nil {
		return m
	}
	return llm.ModelFunc(func(ctx context.Context, req *llm.Request) iter.Seq[llm.Chunk] {
		r := *req
		r.Images = true
		return m.Stream(ctx, &r)
	})
}

// CatalogFile is the cached catalogue `reins models --refresh` writes
// (internal/catalog), which replaces the embedded one when present.
func CatalogFile(home string) string { return filepath.Join(home, "models.json") }
