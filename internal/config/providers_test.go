package config

import (
	"errors"
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
	for _, want := range []string{"ANTHROPIC_API_KEY is not set (needed by provider anthropic)", "OPENAI_API_KEY", "DEEPSEEK_API_KEY", "GEMINI_API_KEY", "-m sonnet"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %q", err, want)
		}
	}
}
