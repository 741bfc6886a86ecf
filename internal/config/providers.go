package config

import (
	"cmp"
	"net/url"
	"slices"
	"strings"
)

// Providers by name (docs/providers.md#providers-of-your-own): besides the
// built-ins (Providers), reins knows the presets — OpenAI-compatible
// services and local servers, each a base URL, a wire and a key variable
// (ProviderDefaults) — and any name the config gives a wire and a
// baseURL (`providers.myollama: {wire: chat, baseURL: ...}`).

// Presets are the providers reins knows besides Providers, in display
// order.
var Presets = []string{"openrouter", "groq", "together", "ollama", "lmstudio", "vllm"}

// keyOptional reports whether the preset's servers usually take no key
// (local ones): its variable's key is sent when set, and its absence is
// no error.
func keyOptional(name string) bool {
	switch name {
	case "ollama", "lmstudio", "vllm":
		return true
	}
	return false
}

// keyVars are the key variables of the providers reins picks from when no
// model is chosen (SPEC §12's order), for the missing-key message.
func keyVars() []string {
	return []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "DEEPSEEK_API_KEY", "GEMINI_API_KEY"}
}

// validProviderName: a name that fits PROVIDER/MODEL and a YAML key.
func validProviderName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// providerList names the providers for messages: built-ins and presets.
func providerList() string {
	return strings.Join(Providers, ", ") + ", a preset (" + strings.Join(Presets, ", ") + ") or a name under providers: with a wire and a baseURL"
}

// providerList is the package's, with the config's own providers named.
func (c *Config) providerList() string {
	if own := c.ownProviders(); len(own) > 0 {
		return strings.Join(Providers, ", ") + ", " + strings.Join(Presets, ", ") + ", " + strings.Join(own, ", ")
	}
	return providerList()
}

// ownProviders are the names under providers: that are neither built-ins
// nor presets, sorted.
func (c *Config) ownProviders() []string {
	var own []string
	for name := range c.providers {
		if w, _, _, _ := ProviderDefaults(name); w == "" {
			own = append(own, name)
		}
	}
	slices.Sort(own)
	return own
}

// ProviderNames are every provider c knows: built-ins, presets and the
// config's own.
func (c *Config) ProviderNames() []string {
	return slices.Concat(Providers, Presets, c.ownProviders())
}

// KeyEnv is the variable that holds the provider's key: the config's
// apiKeyEnv, else its built-in one; "" for none.
func (c *Config) KeyEnv(name string) string {
	if raw := c.providers[name]; raw.apiKeyEnv != nil {
		return *raw.apiKeyEnv
	}
	_, env, _, _ := ProviderDefaults(name)
	return env
}

// known reports whether name is a provider: a built-in, a preset, or one
// of the config's own (which checkProviders made sure has its wire and
// baseURL).
func (c *Config) known(name string) bool {
	if w, _, _, _ := ProviderDefaults(name); w != "" {
		return true
	}
	_, ok := c.providers[name]
	return ok
}

// checkProviders refuses a provider of the user's own that lacks its wire
// or its baseURL after all layers: reins cannot tell where it is or how to
// speak to it.
func (c *Config) checkProviders() error {
	for _, name := range c.ownProviders() {
		raw := c.providers[name]
		if raw.wire == nil || raw.baseURL == nil {
			return &Error{Kind: KindValue, File: raw.at.file, Key: "providers." + name, Line: raw.line,
				Want: "a wire (" + strings.Join(Wires, ", ") + ") and a baseURL, as " + name + " is not one of " + strings.Join(Providers, ", ") + " nor a preset (" + strings.Join(Presets, ", ") + ")"}
		}
	}
	return nil
}

// WireFor is the wire a request to provider at baseURL goes by (SPEC §13,
// one wire per attempt, never guessed by retrying): --wire (flag) when
// given; else the config's providers.NAME.wire; else, for openai at a base
// URL other than OpenAI's own, chat (an OpenAI-compatible server: Ollama,
// vLLM, llama.cpp speak chat completions, not Responses); else the
// provider's own. The mock provider has only its own.
func (c *Config) WireFor(provider, baseURL, flag string) string {
	pc := c.Provider(provider)
	switch {
	case pc.Wire == WireMock:
		return pc.Wire
	case flag != "":
		return flag
	case pc.WireSet:
		return pc.Wire
	case provider == "openai" && !isOpenAI(baseURL):
		return WireChat
	}
	return cmp.Or(pc.Wire, WireChat)
}

// isOpenAI reports whether baseURL is OpenAI's own API.
func isOpenAI(baseURL string) bool {
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}
