package config

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/reinsdev/reins/internal/mcpspec"
	"github.com/reinsdev/reins/internal/trust"
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

// Headers a provider's config may not set: the request's own framing,
// which the wire decides. Auth headers (Authorization, x-api-key,
// x-goog-api-key) may be replaced, which is how a gateway with its own
// token scheme is reached.
var framingHeaders = []string{"Host", "Content-Length", "Content-Type", "Accept", "Transfer-Encoding", "Connection", "Te", "Trailer", "Upgrade"}

// maxHeaders bounds providers.NAME.headers.
const maxHeaders = 32

// parseHeaders decodes providers.NAME.headers: header names to values.
// An error never quotes a value (it may be a token): it names the key and
// line only.
func parseHeaders(d *decoder, n ast.Node, path string) (map[string]rawHeader, error) {
	out := map[string]rawHeader{}
	err := d.each(n, path, "a mapping of HTTP header names to values", func(name string, v ast.Node, kp string, line int) error {
		if !validHeaderName(name) {
			return &Error{Kind: KindValue, File: d.file, Key: path, Line: line, Want: "HTTP header names (letters, digits, '-', '_'; at most 100 bytes)"}
		}
		canon := http.CanonicalHeaderKey(name)
		if slices.Contains(framingHeaders, canon) {
			return &Error{Kind: KindValue, File: d.file, Key: kp, Line: line, Want: "a header other than " + strings.Join(framingHeaders, ", ") + " (the wire sets those)"}
		}
		s, ok := d.scalarText(d.resolve(v))
		if !ok || s == "" || !validHeaderValue(s) {
			return &Error{Kind: KindValue, File: d.file, Key: kp, Line: d.line(v), Want: "a header value: non-empty text without line breaks or control characters, at most 8192 bytes (the value is not shown)"}
		}
		if len(out) == maxHeaders {
			return &Error{Kind: KindValue, File: d.file, Key: path, Line: line, Want: fmt.Sprintf("at most %d headers", maxHeaders)}
		}
		out[canon] = rawHeader{value: s}
		return nil
	})
	return out, err
}

func validHeaderName(name string) bool {
	if name == "" || len(name) > 100 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func validHeaderValue(v string) bool {
	if len(v) > 8192 {
		return false
	}
	for _, r := range v {
		if r < 0x20 && r != '\t' || r == 0x7f {
			return false
		}
	}
	return true
}

// validModelName: a model id as a provider names it (qwen3:8b,
// anthropic/claude-sonnet-4.5): printable, no spaces.
func validModelName(m string) bool {
	if m == "" || len(m) > 200 {
		return false
	}
	for _, r := range m {
		if r <= ' ' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return false
		}
	}
	return true
}

// overHeaders is hi's headers over lo's, name by name.
func overHeaders(hi, lo map[string]rawHeader) map[string]rawHeader {
	if len(hi) == 0 {
		return lo
	}
	out := maps.Clone(lo)
	if out == nil {
		out = map[string]rawHeader{}
	}
	maps.Copy(out, hi)
	return out
}

// Headers are the extra HTTP headers of provider's requests
// (providers.NAME.headers), their ${VAR} and ${VAR:-default} expanded from
// getenv. Like apiKeyEnv, a header naming a variable is the user's choice
// alone: one from a layer that is not the user's config, a --config file
// or a trusted folder's is an error, and so are expanded variables sent to
// a baseURL such a layer chose. Errors name the header, never its value.
func (c *Config) Headers(provider string, getenv func(string) string) (http.Header, error) {
	raw := c.providers[provider]
	if len(raw.headers) == 0 {
		return nil, nil
	}
	out := make(http.Header, len(raw.headers))
	for _, name := range slices.Sorted(maps.Keys(raw.headers)) {
		h := raw.headers[name]
		if vars := headerVars(h.value); len(vars) > 0 {
			if !h.from.origin.UserChosen() {
				return nil, fmt.Errorf("%s: providers.%s.headers.%s would send your variable %s, but this file is not your config, a --config file or a trusted folder's", trust.Quote(h.from.file), provider, name, vars[0])
			}
			if raw.baseURL != nil && !raw.from.origin.UserChosen() {
				return nil, &KeyRedirectError{Provider: provider, File: raw.from.file, Key: "providers." + provider + ".headers." + name}
			}
		}
		if v := mcpspec.Expand(h.value, getenv); v != "" {
			out.Set(name, v)
		}
	}
	return out, nil
}

// headerVars are the variables v names in ${VAR}, each once.
func headerVars(v string) []string {
	var out []string
	mcpspec.Expand(v, func(k string) string {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
		return ""
	})
	return out
}

// SecretVars are the variables whose values are the user's provider
// secrets: every provider's key variable (built-in, preset, or the one a
// provider of the user's own names in apiKeyEnv) and every variable a
// provider's headers name. The sandbox withholds them from every process
// and the redactor hides their values: one list for both.
func (c *Config) SecretVars() []string {
	var out []string
	add := func(v string) {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, name := range c.ProviderNames() {
		add(c.KeyEnv(name))
	}
	for _, name := range slices.Sorted(maps.Keys(c.providers)) {
		for _, h := range c.providers[name].headers {
			for _, v := range headerVars(h.value) {
				add(v)
			}
		}
	}
	return out
}

// ListedModels are the models the config's providers list
// (providers.NAME.models) as PROVIDER/MODEL, by provider name then in the
// order written: what /model and `reins models` offer besides the
// catalogue.
func (c *Config) ListedModels() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(c.providers)) {
		if ms := c.providers[name].models; ms != nil {
			for _, m := range *ms {
				out = append(out, name+"/"+m)
			}
		}
	}
	return out
}

// MissingKey is the key variable provider needs and getenv lacks ("" when
// it has its key or needs none): Endpoint's rule, for the lists that mark
// providers without a key (/model, `reins models`).
func (c *Config) MissingKey(provider string, getenv func(string) string) string {
	_, _, err := c.Endpoint(provider, getenv, "")
	var mk *MissingKeyError
	if errors.As(err, &mk) {
		return mk.EnvVar
	}
	return ""
}
