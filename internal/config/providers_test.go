package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestProvidersByName (issue 48, SPEC §13): a provider of the user's own
// with a wire and a baseURL, the presets, and the wire each request goes
// by.
func TestProvidersByName(t *testing.T) {
	c, err := Load(layers(t, "", "", "providers:\n  myollama: {wire: chat, baseURL: 'http://gpu-box:11434/v1/'}\n  gw: {wire: anthropic, baseURL: 'https://gw.example', apiKeyEnv: GW_TOKEN}\n  openai: {wire: responses}\n"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GROQ_API_KEY": "g", "GW_TOKEN": "t"}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		provider, flag    string
		wantURL, wantKey  string
		wantErr, wantWire string
	}{
		{provider: "myollama", wantURL: "http://gpu-box:11434/v1", wantWire: WireChat},
		{provider: "gw", wantURL: "https://gw.example", wantKey: "t", wantWire: WireAnthropic},
		{provider: "groq", wantURL: "https://api.groq.com/openai/v1", wantKey: "g", wantWire: WireChat},
		{provider: "ollama", wantURL: "http://localhost:11434/v1", wantWire: WireChat},
		{provider: "vllm", flag: "http://10.0.0.9:8000/v1", wantURL: "http://10.0.0.9:8000/v1", wantWire: WireChat},
		{provider: "openrouter", wantErr: "OPENROUTER_API_KEY is not set"},
		{provider: "together", wantErr: "TOGETHER_API_KEY is not set"},
		{provider: "lmstudio", wantURL: "http://localhost:1234/v1", wantWire: WireChat},
		{provider: "nosuch", wantErr: `unknown provider "nosuch"`},
	} {
		url, key, err := c.Endpoint(tc.provider, getenv, tc.flag)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err %v, want %q", tc.provider, err, tc.wantErr)
			}
			continue
		}
		if err != nil || url != tc.wantURL || key != tc.wantKey {
			t.Errorf("%s: %q %q %v, want %q %q", tc.provider, url, key, err, tc.wantURL, tc.wantKey)
		}
		if w := c.WireFor(tc.provider, url, ""); w != tc.wantWire {
			t.Errorf("%s: wire %s, want %s", tc.provider, w, tc.wantWire)
		}
	}
	if p, m, err := c.ResolveModel("myollama/qwen3:8b"); err != nil || p != "myollama" || m != "qwen3:8b" {
		t.Errorf("ResolveModel(myollama/qwen3:8b) = %q %q %v", p, m, err)
	}
	// The config's own wire wins over openai's rule.
	if w := c.WireFor("openai", "http://localhost:8080/v1", ""); w != WireResponses {
		t.Errorf("openai with config wire responses at a local URL: %s", w)
	}
}

// TestWireFor: openai at a base URL other than OpenAI's speaks chat unless
// --wire or the config says otherwise; --wire wins; mock is mock.
func TestWireFor(t *testing.T) {
	c := Default()
	for _, tc := range []struct{ provider, url, flag, want string }{
		{"openai", "https://api.openai.com/v1", "", WireResponses},
		{"openai", "http://127.0.0.1:11434/v1", "", WireChat},
		{"openai", "http://127.0.0.1:11434/v1", "responses", WireResponses},
		{"deepseek", "https://api.deepseek.com", "", WireChat},
		{"deepseek", "https://api.deepseek.com", "anthropic", WireAnthropic},
		{"anthropic", "https://api.anthropic.com", "", WireAnthropic},
		{"gemini", "http://127.0.0.1:9", "", WireGemini},
		{"mock", "", "chat", WireMock},
	} {
		if got := c.WireFor(tc.provider, tc.url, tc.flag); got != tc.want {
			t.Errorf("WireFor(%s, %s, %q) = %s, want %s", tc.provider, tc.url, tc.flag, got, tc.want)
		}
	}
}

// TestMissingKeyNamesEveryKey (issue 48): the missing-key error names
// every provider's key variable and -m.
func TestMissingKeyNamesEveryKey(t *testing.T) {
	_, _, err := Default().Endpoint("anthropic", func(string) string { return "" }, "")
	var mk *MissingKeyError
	if !errors.As(err, &mk) {
		t.Fatalf("err %v, want *MissingKeyError", err)
	}
	// A newcomer with no key, or only a service's or a local server's,
	// learns where to look and how to try reins without one.
	for _, want := range []string{"ANTHROPIC_API_KEY is not set (needed by provider anthropic)", "OPENAI_API_KEY", "DEEPSEEK_API_KEY", "GEMINI_API_KEY", "-m sonnet",
		"-m openrouter/MODEL", "-m ollama/MODEL", "reins models shows every provider and whether its key is set", "reins demo runs without a key"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %q", err, want)
		}
	}
}

// TestProviderHeadersAndModels (SPEC §13 "providers by name"):
// providers.NAME.headers are sent with ${VAR} expanded, layer over layer
// by name; their variables are secrets; providers.NAME.models are listed;
// a bad header never shows its value.
func TestProviderHeadersAndModels(t *testing.T) {
	c, err := Load(layers(t,
		"providers:\n  gw:\n    wire: chat\n    baseURL: https://gw.example/v1\n    headers: {x-team: red, Authorization: 'Bearer ${GW_TOK}'}\n    models: [m1, 'org/m2:8b']\n",
		"providers:\n  gw:\n    headers: {X-Team: blue}\n  openrouter:\n    models: [anthropic/claude-sonnet-4.5]\n    headers: {HTTP-Referer: 'https://example.org', X-Opt: '${UNSET_VAR}'}\n", ""))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GW_TOK": "s3cret-token-value"}
	h, err := c.Headers("gw", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if h.Get("X-Team") != "blue" || h.Get("Authorization") != "Bearer s3cret-token-value" || len(h) != 2 {
		t.Errorf("gw headers = %v", h)
	}
	h, err = c.Headers("openrouter", func(string) string { return "" })
	if err != nil || h.Get("Http-Referer") != "https://example.org" || h.Get("X-Opt") != "" {
		t.Errorf("openrouter headers = %v, %v (an unset variable's header is not sent)", h, err)
	}
	if h, err := c.Headers("deepseek", nil); h != nil || err != nil {
		t.Errorf("deepseek headers = %v %v, want none", h, err)
	}
	if got := c.SecretVars(); !slices.Contains(got, "GW_TOK") || !slices.Contains(got, "UNSET_VAR") || !slices.Contains(got, "DEEPSEEK_API_KEY") || !slices.Contains(got, "OPENROUTER_API_KEY") {
		t.Errorf("SecretVars = %v", got)
	}
	want := []string{"gw/m1", "gw/org/m2:8b", "openrouter/anthropic/claude-sonnet-4.5"}
	if got := c.ListedModels(); !slices.Equal(got, want) {
		t.Errorf("ListedModels = %v, want %v", got, want)
	}
	// A header whose layer the user did not choose may not send a variable.
	raw := c.providers["gw"]
	hd := raw.headers["Authorization"]
	hd.from.origin = OriginUnknown
	raw.headers["Authorization"] = hd
	c.providers["gw"] = raw
	if _, err := c.Headers("gw", func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "GW_TOK") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("header from an unchosen layer: %v", err)
	}

	// Bad headers and models: errors name the key, never the value.
	for _, tc := range []struct{ yaml, key string }{
		{"providers:\n  openai:\n    headers: {X-K: \"tok\\nen-SECRETVALUE\"}\n", "providers.openai.headers.X-K"},
		{"providers:\n  openai:\n    headers: {Host: SECRETVALUE}\n", "providers.openai.headers.Host"},
		{"providers:\n  openai:\n    headers: {'a b': SECRETVALUE}\n", "providers.openai.headers"},
		{"providers:\n  openai:\n    headers: {X-K: ''}\n", "providers.openai.headers.X-K"},
		{"providers:\n  openai:\n    headers: [SECRETVALUE]\n", "providers.openai.headers"},
		{"providers:\n  openai:\n    models: ['has space']\n", "providers.openai.models[0]"},
		{"providers:\n  openai:\n    models: m1\n", "providers.openai.models"},
	} {
		_, err := Load(layers(t, tc.yaml, "", ""))
		if err == nil || !strings.Contains(err.Error(), tc.key) || strings.Contains(err.Error(), "SECRETVALUE") {
			t.Errorf("%q: err %v, want one naming %s without the value", tc.yaml, err, tc.key)
		}
	}
}

// TestMissingKey: the one rule the pickers use for "no key".
func TestMissingKey(t *testing.T) {
	c, err := Load(layers(t, "providers:\n  gw: {wire: chat, baseURL: 'https://gw.example', apiKeyEnv: GW_TOKEN}\n  local: {wire: chat, baseURL: 'http://10.1.1.1/v1'}\n", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	none := func(string) string { return "" }
	for name, want := range map[string]string{"anthropic": "ANTHROPIC_API_KEY", "groq": "GROQ_API_KEY", "ollama": "", "vllm": "", "gw": "GW_TOKEN", "local": "", "mock": ""} {
		if got := c.MissingKey(name, none); got != want {
			t.Errorf("MissingKey(%s) = %q, want %q", name, got, want)
		}
	}
	if got := c.MissingKey("groq", func(k string) string { return map[string]string{"GROQ_API_KEY": "k"}[k] }); got != "" {
		t.Errorf("groq with its key: %q", got)
	}
}
