package harness

import (
	"path/filepath"

	"github.com/reinsdev/reins/internal/catalog"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/lazy"
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

// CatalogFile is the cached catalogue `reins models --refresh` writes
// (internal/catalog), which replaces the embedded one when present.
func CatalogFile(home string) string { return filepath.Join(home, "models.json") }
