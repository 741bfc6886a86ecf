package config

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reinsdev/reins/internal/catalog"
	"github.com/reinsdev/reins/internal/llm"
)

// writeFile creates path (and its directories) with content.
func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// layers writes the non-empty contents as the home, cwd and extra layers;
// the cwd is trusted.
// loadCase is the load of a config table test's case: the home and cwd
// layers loaded, which must fail naming badKey when it is set (then
// loadCase returns nil) and must succeed otherwise.
func loadCase(t *testing.T, home, cwd, badKey string) *Config {
	t.Helper()
	c, err := Load(layers(t, home, cwd, ""))
	if badKey != "" {
		if err == nil || !strings.Contains(err.Error(), badKey) {
			t.Fatalf("err = %v, want an error naming %s", err, badKey)
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func layers(t *testing.T, home, cwd, extra string) LoadOptions {
	t.Helper()
	root := t.TempDir()
	opts := LoadOptions{Home: filepath.Join(root, "home"), Cwd: filepath.Join(root, "work"), Trusted: true}
	if home != "" {
		writeFile(t, filepath.Join(opts.Home, "config.yaml"), home)
	}
	if cwd != "" {
		writeFile(t, filepath.Join(opts.Cwd, ".reins", "config.yaml"), cwd)
	}
	if extra != "" {
		opts.Extra = writeFile(t, filepath.Join(root, "extra.yaml"), extra)
	}
	return opts
}

func TestLoadLayerPrecedence(t *testing.T) {
	tests := []struct {
		name             string
		home, cwd, extra string
		wantModel        string
	}{
		{"none", "", "", "", "deepseek/deepseek-chat"},
		{"home only", "model: openai/gpt-4o\n", "", "", "openai/gpt-4o"},
		{"cwd over home", "model: openai/gpt-4o\n", "model: anthropic/claude-x\n", "", "anthropic/claude-x"},
		{"extra over cwd", "model: openai/gpt-4o\n", "model: anthropic/claude-x\n", "model: mock/echo\n", "mock/echo"},
		{"extra over home", "model: openai/gpt-4o\n", "", "model: mock/echo\n", "mock/echo"},
		{"later layer without model keeps earlier", "model: openai/gpt-4o\n", "subagents: {maxParallel: 2}\n", "", "openai/gpt-4o"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(layers(t, tt.home, tt.cwd, tt.extra))
			if err != nil {
				t.Fatal(err)
			}
			if c.Model != tt.wantModel {
				t.Errorf("Model = %q, want %q", c.Model, tt.wantModel)
			}
		})
	}
}

func TestLoadPerKeyMerge(t *testing.T) {
	home := `
model: sonnet
providers:
  deepseek:
    baseURL: https://home.example
    apiKey: home-key
    retry:
      maxRetries: 2
      initialDelay: 1s
  openai:
    idleTimeout: 30s
modelAliases:
  sonnet: anthropic/claude-sonnet-4-5
  fast: deepseek/deepseek-chat
subagents:
  maxDepth: 1
  maxParallel: 4
`
	cwd := `
providers:
  deepseek:
    retry:
      jitter: 0
      retryableCodes: []
modelAliases:
  fast: openai/gpt-4o-mini
`
	extra := `
providers:
  deepseek:
    baseURL: https://extra.example/
subagents:
  maxBackgroundJobs: 1
`
	opts := layers(t, home, cwd, extra)
	c, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(opts.Home, "config.yaml"), filepath.Join(opts.Cwd, ".reins", "config.yaml"), opts.Extra}; !cmp.Equal(c.Files, want) {
		t.Errorf("Files = %v, want %v", c.Files, want)
	}
	wantRetry := RetryPolicy{MaxRetries: 2, InitialDelay: time.Second, MaxDelay: 10 * time.Second, Jitter: 0, RetryableCodes: []llm.Code{}}
	if d := cmp.Diff(wantRetry, c.Retry("deepseek")); d != "" {
		t.Errorf("Retry(deepseek) (-want +got):\n%s", d)
	}
	wantDS := ProviderConfig{Wire: WireChat, BaseURL: "https://extra.example", APIKey: "home-key", IdleTimeout: 300 * time.Second, ProgressTimeout: 10 * time.Minute, Retry: wantRetry}
	if d := cmp.Diff(wantDS, c.Provider("deepseek")); d != "" {
		t.Errorf("Provider(deepseek) (-want +got):\n%s", d)
	}
	if got := c.Provider("openai").IdleTimeout; got != 30*time.Second {
		t.Errorf("openai idleTimeout = %v, want 30s", got)
	}
	wantAliases := map[string]string{"sonnet": "anthropic/claude-sonnet-4-5", "fast": "openai/gpt-4o-mini"}
	if d := cmp.Diff(wantAliases, c.ModelAliases); d != "" {
		t.Errorf("ModelAliases (-want +got):\n%s", d)
	}
	if want := (Subagents{MaxDepth: 1, MaxParallel: 4, MaxBackgroundJobs: 1, StartTimeout: DefaultStartTimeout, StallTimeout: DefaultStallTimeout, IdleTimeout: DefaultIdleTimeout, MaxResultBytes: DefaultMaxResultBytes, CancelGrace: DefaultCancelGrace, Engine: EngineLocal, Temporal: Temporal{Address: DefaultTemporalAddress, Namespace: DefaultTemporalNamespace, TaskQueue: DefaultTemporalTaskQueue}}); c.Subagents != want {
		t.Errorf("Subagents = %+v, want %+v", c.Subagents, want)
	}
	// The model named an alias defined in the same layer; it resolves.
	if p, m, err := c.ResolveModel(c.Model); err != nil || p != "anthropic" || m != "claude-sonnet-4-5" {
		t.Errorf("ResolveModel(%q) = %q, %q, %v", c.Model, p, m, err)
	}
}

func TestDefaults(t *testing.T) {
	c, err := Load(layers(t, "", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) != 0 {
		t.Errorf("Files = %v, want none", c.Files)
	}
	for _, cfg := range []*Config{c, Default()} {
		if cfg.Model != "deepseek/deepseek-chat" {
			t.Errorf("Model = %q", cfg.Model)
		}
		if want := (Subagents{MaxDepth: 3, MaxParallel: 10, MaxBackgroundJobs: 10, StartTimeout: DefaultStartTimeout, StallTimeout: DefaultStallTimeout, IdleTimeout: DefaultIdleTimeout, MaxResultBytes: DefaultMaxResultBytes, CancelGrace: DefaultCancelGrace, Engine: EngineLocal, Temporal: Temporal{Address: DefaultTemporalAddress, Namespace: DefaultTemporalNamespace, TaskQueue: DefaultTemporalTaskQueue}}); cfg.Subagents != want {
			t.Errorf("Subagents = %+v, want %+v", cfg.Subagents, want)
		}
		want := RetryPolicy{
			MaxRetries: 5, InitialDelay: 500 * time.Millisecond, MaxDelay: 10 * time.Second, Jitter: 0.1,
			RetryableCodes: []llm.Code{"EMPTY_RESPONSE", "RATE_LIMIT", "SERVER", "TIMEOUT", "TRANSPORT", "STREAM_CLOSED"},
		}
		for _, p := range []string{"deepseek", "openai", "anthropic", "mock"} {
			if d := cmp.Diff(want, cfg.Retry(p)); d != "" {
				t.Errorf("Retry(%s) (-want +got):\n%s", p, d)
			}
		}
		if got := cfg.Provider("anthropic"); got.BaseURL != "https://api.anthropic.com" || got.IdleTimeout != 300*time.Second || got.APIKey != "" {
			t.Errorf("Provider(anthropic) = %+v", got)
		}
	}
	// The returned policy is a copy: changing it does not change the config.
	r := c.Retry("deepseek")
	r.RetryableCodes[0] = "X"
	if c.Retry("deepseek").RetryableCodes[0] != "EMPTY_RESPONSE" {
		t.Error("Retry returned shared slice")
	}
}

func TestMaxDepthZeroVersusUnset(t *testing.T) {
	tests := []struct {
		name      string
		home, cwd string
		want      int
	}{
		{"unset", "", "", 3},
		{"unset with other subagent keys", "subagents: {maxParallel: 2}\n", "", 3},
		{"zero", "subagents: {maxDepth: 0}\n", "", 0},
		{"zero in cwd overrides home", "subagents: {maxDepth: 5}\n", "subagents: {maxDepth: 0}\n", 0},
		{"zero in home survives a cwd layer that does not set it", "subagents: {maxDepth: 0}\n", "subagents: {maxParallel: 1}\n", 0},
		{"null is unset", "subagents:\n  maxDepth:\n", "", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := loadCase(t, tt.home, tt.cwd, "")
			if c.Subagents.MaxDepth != tt.want {
				t.Errorf("MaxDepth = %d, want %d", c.Subagents.MaxDepth, tt.want)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	// Every file carries a secret on another line: no error may quote it.
	const secret = "sk-do-not-print-me"
	tests := []struct {
		name     string
		body     string
		kind     ErrorKind
		key      string
		line     int
		contains []string
	}{
		{
			name:     "bad YAML",
			body:     "providers:\n  deepseek:\n    apiKey: " + secret + "\nmodel: [deepseek/x\n",
			kind:     KindSyntax,
			line:     4,
			contains: []string{"invalid YAML"},
		},
		{
			name:     "duplicate key",
			body:     "model: openai/a\nmodel: openai/b\nproviders: {deepseek: {apiKey: " + secret + "}}\n",
			kind:     KindSyntax,
			line:     2,
			contains: []string{"invalid YAML", `"model"`},
		},
		{
			name:     "unknown top-level key",
			body:     "providers: {deepseek: {apiKey: " + secret + "}}\nmodle: openai/x\n",
			kind:     KindUnknownKey,
			key:      "modle",
			line:     2,
			contains: []string{`unknown key "modle"`, "model"},
		},
		{
			name:     "unknown nested key",
			body:     "providers:\n  deepseek:\n    apiKey: " + secret + "\n    retyr:\n      maxRetries: 1\n",
			kind:     KindUnknownKey,
			key:      "providers.deepseek.retyr",
			line:     4,
			contains: []string{`unknown key "providers.deepseek.retyr"`, "retry"},
		},
		{
			name:     "unknown key inside retry",
			body:     "providers:\n  openai:\n    apiKey: " + secret + "\n    retry:\n      maxRetires: 1\n",
			kind:     KindUnknownKey,
			key:      "providers.openai.retry.maxRetires",
			line:     5,
			contains: []string{`unknown key "providers.openai.retry.maxRetires"`},
		},
		{
			name:     "unknown provider",
			body:     "providers:\n  deepseek2:\n    apiKey: " + secret + "\n",
			kind:     KindValue,
			key:      "providers.deepseek2",
			line:     2,
			contains: []string{"deepseek, openai, anthropic, gemini, mock", "a wire", "baseURL"},
		},
		{
			name:     "wrong type integer",
			body:     "providers: {deepseek: {apiKey: " + secret + "}}\nsubagents:\n  maxDepth: three\n",
			kind:     KindValue,
			key:      "subagents.maxDepth",
			line:     3,
			contains: []string{`key "subagents.maxDepth": want an integer, got "three"`},
		},
		{
			name:     "wrong type mapping",
			body:     "providers: {deepseek: {apiKey: " + secret + "}}\nsubagents: [1, 2]\n",
			kind:     KindValue,
			key:      "subagents",
			line:     2,
			contains: []string{"want a mapping", "got a list"},
		},
		{
			name:     "bad duration",
			body:     "providers:\n  deepseek:\n    apiKey: " + secret + "\n    retry:\n      initialDelay: fast\n",
			kind:     KindValue,
			key:      "providers.deepseek.retry.initialDelay",
			line:     5,
			contains: []string{`key "providers.deepseek.retry.initialDelay": want a duration such as 500ms, got "fast"`},
		},
		{
			name:     "duration without unit",
			body:     "providers:\n  deepseek:\n    apiKey: " + secret + "\n    idleTimeout: 300\n",
			kind:     KindValue,
			key:      "providers.deepseek.idleTimeout",
			line:     4,
			contains: []string{"want a duration"},
		},
		{
			name:     "negative duration",
			body:     "providers:\n  deepseek:\n    apiKey: " + secret + "\n    retry: {maxDelay: -1s}\n",
			kind:     KindValue,
			key:      "providers.deepseek.retry.maxDelay",
			contains: []string{"want a duration >= 0"},
		},
		{
			name:     "jitter out of range",
			body:     "providers:\n  deepseek:\n    apiKey: " + secret + "\n    retry: {jitter: 1.5}\n",
			kind:     KindValue,
			key:      "providers.deepseek.retry.jitter",
			contains: []string{"between 0 and 1", `got "1.5"`},
		},
		{
			name:     "negative maxRetries",
			body:     "providers:\n  deepseek:\n    apiKey: " + secret + "\n    retry: {maxRetries: -1}\n",
			kind:     KindValue,
			key:      "providers.deepseek.retry.maxRetries",
			contains: []string{"want an integer >= 0"},
		},
		{
			name:     "unknown retryable code",
			body:     "providers:\n  deepseek:\n    apiKey: " + secret + "\n    retry:\n      retryableCodes: [SERVER, TEAPOT]\n",
			kind:     KindValue,
			key:      "providers.deepseek.retry.retryableCodes[1]",
			line:     5,
			contains: []string{`got "TEAPOT"`, "QUOTA"},
		},
		{
			name:     "bad model",
			body:     "providers: {deepseek: {apiKey: " + secret + "}}\nmodel: gpt-4o-nonesuch\n",
			kind:     KindValue,
			key:      "model",
			line:     2,
			contains: []string{"PROVIDER/MODEL", "a short name", `got "gpt-4o-nonesuch"`},
		},
		{
			name:     "bad alias target",
			body:     "providers: {deepseek: {apiKey: " + secret + "}}\nmodelAliases:\n  fast: nosuch/llama\n",
			kind:     KindValue,
			key:      "modelAliases.fast",
			line:     3,
			contains: []string{"PROVIDER/MODEL"},
		},
		{
			name:     "zero maxParallel",
			body:     "providers: {deepseek: {apiKey: " + secret + "}}\nsubagents: {maxParallel: 0}\n",
			kind:     KindValue,
			key:      "subagents.maxParallel",
			contains: []string{"want an integer >= 1"},
		},
		{
			name:     "bad base URL",
			body:     "providers:\n  deepseek:\n    apiKey: " + secret + "\n    baseURL: api.deepseek.com\n",
			kind:     KindValue,
			key:      "providers.deepseek.baseURL",
			line:     4,
			contains: []string{"absolute http"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := layers(t, "", "", tt.body)
			_, err := Load(opts)
			if err == nil {
				t.Fatal("Load succeeded, want error")
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T %q is not *Error", err, err)
			}
			if ce.Kind != tt.kind || ce.File != opts.Extra || ce.Key != tt.key {
				t.Errorf("got kind %d file %q key %q, want kind %d file %q key %q", ce.Kind, ce.File, ce.Key, tt.kind, opts.Extra, tt.key)
			}
			if tt.line != 0 && ce.Line != tt.line {
				t.Errorf("Line = %d, want %d", ce.Line, tt.line)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, opts.Extra+":") {
				t.Errorf("message %q does not start with the file", msg)
			}
			if ce.Line > 0 && !strings.HasPrefix(msg, opts.Extra+":"+strconv.Itoa(ce.Line)+": ") {
				t.Errorf("message %q does not carry line %d", msg, ce.Line)
			}
			if tt.key != "" && !strings.Contains(msg, `"`+tt.key+`"`) {
				t.Errorf("message %q does not name key %q", msg, tt.key)
			}
			for _, s := range tt.contains {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q does not contain %q", msg, s)
				}
			}
			if strings.Contains(msg, secret) || strings.Contains(msg, "\n") {
				t.Errorf("message %q quotes other file content or spans lines", msg)
			}
		})
	}
}

func TestLoadErrorInLowerLayerNamesThatFile(t *testing.T) {
	opts := layers(t, "subagents: {maxDepth: deep}\n", "model: openai/x\n", "")
	_, err := Load(opts)
	var ce *Error
	if !errors.As(err, &ce) || ce.File != filepath.Join(opts.Home, "config.yaml") {
		t.Fatalf("err = %v, want an *Error for the home layer", err)
	}
}

func TestLoadMissingFiles(t *testing.T) {
	root := t.TempDir()
	// Missing home and cwd layers are fine.
	if _, err := Load(LoadOptions{Home: filepath.Join(root, "nohome"), Cwd: filepath.Join(root, "nocwd")}); err != nil {
		t.Errorf("missing optional layers: %v", err)
	}
	// A missing --config file is an error naming it.
	extra := filepath.Join(root, "missing.yaml")
	_, err := Load(LoadOptions{Home: root, Extra: extra})
	if err == nil || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), extra) {
		t.Errorf("missing --config: err = %v, want not-exist naming %s", err, extra)
	}
}

func TestLoadEmptyAndCommentOnlyFiles(t *testing.T) {
	for _, body := range []string{"\n", "# nothing here\n", "providers:\nmodelAliases: {}\n"} {
		c, err := Load(layers(t, "", "", body))
		if err != nil {
			t.Errorf("%q: %v", body, err)
			continue
		}
		if c.Model != DefaultModel || c.Retry("deepseek").MaxRetries != 5 {
			t.Errorf("%q: defaults not kept: %+v", body, c)
		}
	}
}

func TestLoadAnchorsAndLenientStrings(t *testing.T) {
	body := `
providers:
  deepseek:
    apiKey: 12345
    retry: &r
      maxRetries: 1
  openai:
    retry: *r
`
	c, err := Load(layers(t, "", "", body))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Provider("deepseek").APIKey; got != "12345" {
		t.Errorf("apiKey = %q, want the digits as written", got)
	}
	if got := c.Retry("openai").MaxRetries; got != 1 {
		t.Errorf("aliased retry maxRetries = %d, want 1", got)
	}
}

func TestResolveModel(t *testing.T) {
	c := Default()
	c.ModelAliases = map[string]string{"sonnet": "anthropic/claude-sonnet-4-5", "broken": "nope"}
	tests := []struct {
		spec          string
		provider      string
		model         string
		errContaining string
	}{
		{spec: "deepseek/deepseek-chat", provider: "deepseek", model: "deepseek-chat"},
		{spec: "openai/gpt-4o", provider: "openai", model: "gpt-4o"},
		{spec: "anthropic/claude-opus-4-1", provider: "anthropic", model: "claude-opus-4-1"},
		{spec: "mock/echo", provider: "mock", model: "echo"},
		{spec: "openai/library/qwen:7b", provider: "openai", model: "library/qwen:7b"},
		{spec: "sonnet", provider: "anthropic", model: "claude-sonnet-4-5"},
		{spec: "gpt-4o", provider: "openai", model: "gpt-4o"},                         // a unique id needs no provider (SPEC §12)
		{spec: "gpt", provider: "openai", model: catalog.Current().Default("openai")}, // newest of the family
		{spec: "no-such-model", errContaining: `no model named "no-such-model"`},
		{spec: "", errContaining: "want PROVIDER/MODEL"},
		{spec: "openai/", errContaining: "want PROVIDER/MODEL"},
		{spec: "/gpt", errContaining: "want PROVIDER/MODEL"},
		{spec: "nosuch/llama", errContaining: `unknown provider "nosuch"`},
		{spec: "broken", errContaining: `model alias "broken"`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			p, m, err := c.ResolveModel(tt.spec)
			if tt.errContaining != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errContaining) {
					t.Fatalf("err = %v, want one containing %q", err, tt.errContaining)
				}
				if _, short := errors.AsType[*catalog.NameError](err); !short && !strings.Contains(err.Error(), "deepseek, openai, anthropic, gemini, mock") {
					t.Errorf("err %q does not list the providers", err)
				}
				return
			}
			if err != nil || p != tt.provider || m != tt.model {
				t.Errorf("= %q, %q, %v; want %q, %q", p, m, err, tt.provider, tt.model)
			}
		})
	}
}

func TestProviderDefaults(t *testing.T) {
	tests := []struct{ name, wire, key, urlEnv, url string }{
		{"deepseek", "chat", "DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "https://api.deepseek.com"},
		{"openai", "responses", "OPENAI_API_KEY", "OPENAI_BASE_URL", "https://api.openai.com/v1"},
		{"gemini", "gemini", "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com"},
		{"anthropic", "anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "https://api.anthropic.com"},
		{"mock", "mock", "", "", ""},
		{"groq", "chat", "GROQ_API_KEY", "", "https://api.groq.com/openai/v1"},
		{"nosuch", "", "", "", ""},
	}
	for _, tt := range tests {
		w, k, u, d := ProviderDefaults(tt.name)
		if w != tt.wire || k != tt.key || u != tt.urlEnv || d != tt.url {
			t.Errorf("ProviderDefaults(%s) = %q %q %q %q", tt.name, w, k, u, d)
		}
	}
}

func TestEndpoint(t *testing.T) {
	withCfg := func(t *testing.T, body string) *Config {
		t.Helper()
		if body == "" {
			return Default()
		}
		c, err := Load(layers(t, "", "", body))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := []struct {
		name     string
		cfg      string
		provider string
		env      map[string]string
		flag     string
		wantURL  string
		wantKey  string
		wantErr  string
	}{
		{name: "defaults with env key", provider: "deepseek", env: map[string]string{"DEEPSEEK_API_KEY": "k"},
			wantURL: "https://api.deepseek.com", wantKey: "k"},
		{name: "config URL over default", provider: "deepseek", cfg: "providers: {deepseek: {baseURL: 'https://cfg.example'}}\n",
			env: map[string]string{"DEEPSEEK_API_KEY": "k"}, wantURL: "https://cfg.example", wantKey: "k"},
		{name: "env URL over config", provider: "deepseek", cfg: "providers: {deepseek: {baseURL: 'https://cfg.example'}}\n",
			env: map[string]string{"DEEPSEEK_API_KEY": "k", "DEEPSEEK_BASE_URL": "https://env.example/"}, wantURL: "https://env.example", wantKey: "k"},
		{name: "flag over env", provider: "deepseek", cfg: "providers: {deepseek: {baseURL: 'https://cfg.example'}}\n",
			env: map[string]string{"DEEPSEEK_API_KEY": "k", "DEEPSEEK_BASE_URL": "https://env.example"}, flag: "https://flag.example",
			wantURL: "https://flag.example", wantKey: "k"},
		{name: "config key over env key", provider: "anthropic", cfg: "providers: {anthropic: {apiKey: cfgkey}}\n",
			env: map[string]string{"ANTHROPIC_API_KEY": "envkey"}, wantURL: "https://api.anthropic.com", wantKey: "cfgkey"},
		{name: "missing deepseek key", provider: "deepseek", wantErr: "DEEPSEEK_API_KEY is not set (needed by provider deepseek)"},
		{name: "missing openai key at default URL", provider: "openai", wantErr: "OPENAI_API_KEY is not set (needed by provider openai)"},
		{name: "missing anthropic key", provider: "anthropic", flag: "https://proxy.example", wantErr: "ANTHROPIC_API_KEY is not set"},
		{name: "openai local server needs no key", provider: "openai", flag: "http://gpu-box:11434/v1",
			wantURL: "http://gpu-box:11434/v1"},
		{name: "openai base URL from env needs no key", provider: "openai", env: map[string]string{"OPENAI_BASE_URL": "http://10.0.0.2:8000/v1"},
			wantURL: "http://10.0.0.2:8000/v1"},
		{name: "deepseek loopback needs no key", provider: "deepseek", flag: "http://127.0.0.1:9999", wantURL: "http://127.0.0.1:9999"},
		{name: "anthropic localhost needs no key", provider: "anthropic", cfg: "providers: {anthropic: {baseURL: 'http://localhost:8080'}}\n",
			wantURL: "http://localhost:8080"},
		{name: "ipv6 loopback", provider: "deepseek", flag: "http://[::1]:80", wantURL: "http://[::1]:80"},
		{name: "deepseek remote non-default still needs key", provider: "deepseek", flag: "http://fake.example", wantErr: "DEEPSEEK_API_KEY is not set"},
		{name: "mock has no endpoint", provider: "mock", flag: "http://ignored"},
		{name: "gemini key and base URL variables", provider: "gemini", env: map[string]string{"GEMINI_API_KEY": "g", "GOOGLE_GEMINI_BASE_URL": "https://gw.example/"},
			wantURL: "https://gw.example", wantKey: "g"},
		{name: "missing gemini key", provider: "gemini", wantErr: "GEMINI_API_KEY is not set (needed by provider gemini)"},
		{name: "gemini loopback needs no key", provider: "gemini", flag: "http://127.0.0.1:9", wantURL: "http://127.0.0.1:9"},
		{name: "apiKeyEnv names the key variable", provider: "openai", cfg: "providers: {openai: {apiKeyEnv: MY_GATEWAY_KEY}}\n",
			env: map[string]string{"OPENAI_API_KEY": "not-this", "MY_GATEWAY_KEY": "gw"}, wantURL: "https://api.openai.com/v1", wantKey: "gw"},
		{name: "apiKeyEnv names the missing variable", provider: "openai", cfg: "providers: {openai: {apiKeyEnv: MY_GATEWAY_KEY}}\n",
			wantErr: "MY_GATEWAY_KEY is not set (needed by provider openai)"},
		{name: "unknown provider", provider: "nosuch", wantErr: `unknown provider "nosuch"`},
		{name: "bad flag URL", provider: "openai", flag: "localhost:8080", wantErr: "base URL from --base-url: want an absolute http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := withCfg(t, tt.cfg)
			getenv := func(k string) string { return tt.env[k] }
			url, key, err := c.Endpoint(tt.provider, getenv, tt.flag)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if url != tt.wantURL || key != tt.wantKey {
				t.Errorf("= %q, %q; want %q, %q", url, key, tt.wantURL, tt.wantKey)
			}
		})
	}
}

func TestMissingKeyErrorIsTyped(t *testing.T) {
	_, _, err := Default().Endpoint("anthropic", func(string) string { return "" }, "")
	var mk *MissingKeyError
	if !errors.As(err, &mk) || mk.EnvVar != "ANTHROPIC_API_KEY" || mk.Provider != "anthropic" {
		t.Errorf("err = %#v, want *MissingKeyError for ANTHROPIC_API_KEY", err)
	}
}

// TestSandboxOffOnlyFromTheUser: the user's config and --config may turn
// the sandbox off; a project's config, even a trusted one, may only tighten
// it.
func TestSandboxOffOnlyFromTheUser(t *testing.T) {
	for _, c := range []struct {
		origin Origin
		src    string
		ok     bool
		want   Sandbox
	}{
		{OriginUser, "sandbox: {enabled: false}", true, Sandbox{Enabled: false, Network: NetworkOff}},
		{OriginFlag, "sandbox: {enabled: false, network: false}", true, Sandbox{Enabled: false, Network: NetworkOff}},
		{OriginTrustedProject, "sandbox: {enabled: false}", false, Sandbox{}},
		{OriginTrustedProject, "sandbox: {network: false}", true, Sandbox{Enabled: true, Network: NetworkOff}},
		{OriginUser, "sandbox: {enabled: maybe}", false, Sandbox{}},
		{OriginUser, "sandbox: {writable: [/opt/cache]}", true, Sandbox{Enabled: true, Network: NetworkOff, Writable: []string{"/opt/cache"}}},
		{OriginTrustedProject, "sandbox: {writable: [/opt/cache]}", false, Sandbox{}},
		{OriginUser, "sandbox: {writable: [relative/dir]}", false, Sandbox{}},
		// SPEC §12: network off|on (the old booleans still read), the
		// widening keys only from the user, protect from anyone.
		{OriginUser, "sandbox: {network: on}", true, Sandbox{Enabled: true, Network: NetworkOn}},
		{OriginUser, "sandbox: {network: true}", true, Sandbox{Enabled: true, Network: NetworkOn}},
		{OriginUser, "sandbox: {network: maybe}", false, Sandbox{}},
		{OriginTrustedProject, "sandbox: {network: on}", false, Sandbox{}},
		{OriginTrustedProject, "sandbox: {network: off}", true, Sandbox{Enabled: true, Network: NetworkOff}},
		{OriginUser, "sandbox: {allowDomains: [proxy.golang.org]}", true, Sandbox{Enabled: true, Network: NetworkOff, AllowDomains: []string{"proxy.golang.org"}}},
		{OriginTrustedProject, "sandbox: {allowDomains: [evil.example]}", false, Sandbox{}},
		{OriginUser, "sandbox: {env: {pass: [GITHUB_TOKEN], set: {CI: '1'}}}", true, Sandbox{Enabled: true, Network: NetworkOff, Env: SandboxEnv{Pass: []string{"GITHUB_TOKEN"}, Set: map[string]string{"CI": "1"}}}},
		{OriginTrustedProject, "sandbox: {env: {pass: [GITHUB_TOKEN]}}", false, Sandbox{}},
		{OriginTrustedProject, "sandbox: {protect: [deploy]}", true, Sandbox{Enabled: true, Network: NetworkOff, Protect: []string{"deploy"}}},
		{OriginUser, "sandbox: {readable: [~/.npmrc]}", true, Sandbox{Enabled: true, Network: NetworkOff, Readable: []string{filepath.Join(homeDir(t), ".npmrc")}}},
		{OriginTrustedProject, "sandbox: {readable: [~/.ssh]}", false, Sandbox{}},
		// SPEC §13: sandbox.git writable only from the user.
		{OriginUser, "sandbox: {git: writable}", true, Sandbox{Enabled: true, Network: NetworkOff, Git: GitWritable}},
		{OriginTrustedProject, "sandbox: {git: writable}", false, Sandbox{}},
		{OriginTrustedProject, "sandbox: {git: read-only}", true, Sandbox{Enabled: true, Network: NetworkOff, Git: GitReadOnly}},
		{OriginUser, "sandbox: {git: yes}", false, Sandbox{}},
		// SPEC §13 sandbox.limits: the user's are the limits, a project's
		// only a cap (LimitsCap, which may only lower them).
		{OriginUser, "sandbox: {limits: {tmp: 1GiB, pids: 2048, memory: 4G}}", true, Sandbox{Enabled: true, Network: NetworkOff, Limits: Limits{Tmp: 1 << 30, Pids: 2048, Memory: 4 << 30}}},
		{OriginTrustedProject, "sandbox: {limits: {tmp: 64MiB, pids: 100}}", true, Sandbox{Enabled: true, Network: NetworkOff, LimitsCap: Limits{Tmp: 64 << 20, Pids: 100}}},
		{OriginUser, "sandbox: {limits: {tmp: lots}}", false, Sandbox{}},
		{OriginUser, "sandbox: {limits: {pids: 0}}", false, Sandbox{}},
		{OriginUser, "sandbox: {limits: {cpu: 2}}", false, Sandbox{}},
	} {
		r, err := parseConfig("f.yaml", c.origin, []byte(c.src))
		if (err == nil) != c.ok {
			t.Errorf("%v %q: err %v, want ok=%v", c.origin, c.src, err, c.ok)
			continue
		}
		if err != nil {
			if !strings.Contains(err.Error(), "sandbox.") || !strings.Contains(err.Error(), "f.yaml") {
				t.Errorf("%v %q: error %q does not name the file and the key", c.origin, c.src, err)
			}
			continue
		}
		cfg, err := merge([]*rawConfig{r})
		if err != nil {
			t.Fatal(err)
		}
		if !cmp.Equal(cfg.Sandbox, c.want, cmpopts.EquateEmpty()) {
			t.Errorf("%v %q: %+v, want %+v", c.origin, c.src, cfg.Sandbox, c.want)
		}
	}
}

func homeDir(t *testing.T) string {
	h, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// subagents.startTimeout bounds every out-of-process child's start
// (issue 14 item 3): 60 s by default, a positive duration when set.
func TestSubagentsStartTimeout(t *testing.T) {
	for _, tt := range []struct {
		name, home, cwd string
		want            time.Duration
		bad             bool
	}{
		{"default", "", "", DefaultStartTimeout, false},
		{"set", "subagents: {startTimeout: 5s}\n", "", 5 * time.Second, false},
		{"cwd overrides home", "subagents: {startTimeout: 5s}\n", "subagents: {startTimeout: 2m}\n", 2 * time.Minute, false},
		{"zero", "subagents: {startTimeout: 0s}\n", "", 0, true},
		{"not a duration", "subagents: {startTimeout: soon}\n", "", 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bad := ""
			if tt.bad {
				bad = "subagents.startTimeout"
			}
			c := loadCase(t, tt.home, tt.cwd, bad)
			if c == nil {
				return
			}
			if c.Subagents.StartTimeout != tt.want {
				t.Errorf("StartTimeout = %v, want %v", c.Subagents.StartTimeout, tt.want)
			}
		})
	}
}

// subagents.idleTimeout and subagents.maxResultBytes (issue 16): a kept
// child's idle life and the child output one tool result carries.
func TestSubagentsIdleAndMaxResult(t *testing.T) {
	for _, tt := range []struct {
		name, home, cwd string
		idle            time.Duration
		max             int
		bad             string
	}{
		{"default", "", "", DefaultIdleTimeout, DefaultMaxResultBytes, ""},
		{"set", "subagents: {idleTimeout: 30s, maxResultBytes: 4096}\n", "", 30 * time.Second, 4096, ""},
		{"cwd overrides home", "subagents: {idleTimeout: 30s}\n", "subagents: {idleTimeout: 1h}\n", time.Hour, DefaultMaxResultBytes, ""},
		{"zero idle", "subagents: {idleTimeout: 0s}\n", "", 0, 0, "subagents.idleTimeout"},
		{"tiny max", "subagents: {maxResultBytes: 10}\n", "", 0, 0, "subagents.maxResultBytes"},
		{"max not a number", "subagents: {maxResultBytes: lots}\n", "", 0, 0, "subagents.maxResultBytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := loadCase(t, tt.home, tt.cwd, tt.bad)
			if c == nil {
				return
			}
			if c.Subagents.IdleTimeout != tt.idle || c.Subagents.MaxResultBytes != tt.max {
				t.Errorf("IdleTimeout, MaxResultBytes = %v, %d, want %v, %d", c.Subagents.IdleTimeout, c.Subagents.MaxResultBytes, tt.idle, tt.max)
			}
		})
	}
}

// subagents.cancelGrace (issue 49): how long a parent waits for a
// cancelled remote child before settling it from what it holds.
func TestSubagentsCancelGrace(t *testing.T) {
	for _, tt := range []struct {
		name, home, cwd string
		want            time.Duration
		bad             string
	}{
		{"default", "", "", DefaultCancelGrace, ""},
		{"set", "subagents: {cancelGrace: 3s}\n", "", 3 * time.Second, ""},
		{"cwd overrides home", "subagents: {cancelGrace: 3s}\n", "subagents: {cancelGrace: 1m}\n", time.Minute, ""},
		{"zero", "subagents: {cancelGrace: 0s}\n", "", 0, "subagents.cancelGrace"},
		{"not a duration", "subagents: {cancelGrace: soon}\n", "", 0, "subagents.cancelGrace"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := loadCase(t, tt.home, tt.cwd, tt.bad)
			if c == nil {
				return
			}
			if c.Subagents.CancelGrace != tt.want {
				t.Errorf("CancelGrace = %v, want %v", c.Subagents.CancelGrace, tt.want)
			}
		})
	}
}
func TestContext(t *testing.T) {
	def := Context{CompactAt: DefaultCompactAt, MaxToolResultBytes: DefaultMaxToolResultBytes}
	for _, tt := range []struct {
		name, home, cwd string
		want            Context
		badKey          string
	}{
		{"default", "", "", def, ""},
		{"set", "context: {compactAt: 0.5, maxToolResultBytes: 4096}\n", "", Context{0.5, 4096}, ""},
		{"per key over layers", "context: {compactAt: 0.5, maxToolResultBytes: 4096}\n", "context: {compactAt: 0.7}\n", Context{0.7, 4096}, ""},
		{"one", "context: {compactAt: 1}\n", "", Context{1, DefaultMaxToolResultBytes}, ""},
		{"zero compactAt", "context: {compactAt: 0}\n", "", def, "context.compactAt"},
		{"above one", "context: {compactAt: 1.5}\n", "", def, "context.compactAt"},
		{"zero bytes", "context: {maxToolResultBytes: 0}\n", "", def, "context.maxToolResultBytes"},
		{"unknown key", "context: {compactat: 0.5}\n", "", def, "context.compactat"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := loadCase(t, tt.home, tt.cwd, tt.badKey)
			if c == nil {
				return
			}
			if c.Context != tt.want {
				t.Errorf("Context = %+v, want %+v", c.Context, tt.want)
			}
		})
	}
}

// subagents.engine and subagents.temporal (issue 22): local by default, a
// local dev server's address, namespace and queue unless set; a wrong
// engine or an empty string stops reins naming the key.
func TestSubagentsEngine(t *testing.T) {
	def := Temporal{Address: DefaultTemporalAddress, Namespace: DefaultTemporalNamespace, TaskQueue: DefaultTemporalTaskQueue}
	for _, tt := range []struct {
		name, home, cwd string
		engine          Engine
		temporal        Temporal
		badKey          string
	}{
		{"default", "", "", EngineLocal, def, ""},
		{"temporal", "subagents: {engine: temporal}\n", "", EngineTemporal, def, ""},
		{"cluster", "subagents: {engine: temporal, temporal: {address: 'tc:7233', namespace: ns}}\n", "subagents: {temporal: {taskQueue: q}}\n",
			EngineTemporal, Temporal{Address: "tc:7233", Namespace: "ns", TaskQueue: "q"}, ""},
		{"cwd back to local", "subagents: {engine: temporal}\n", "subagents: {engine: local}\n", EngineLocal, def, ""},
		{"unknown engine", "subagents: {engine: k8s}\n", "", "", Temporal{}, "subagents.engine"},
		{"empty address", "subagents: {temporal: {address: ''}}\n", "", "", Temporal{}, "subagents.temporal.address"},
		{"unknown key", "subagents: {temporal: {host: x}}\n", "", "", Temporal{}, "subagents.temporal.host"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := loadCase(t, tt.home, tt.cwd, tt.badKey)
			if c == nil {
				return
			}
			if c.Subagents.Engine != tt.engine || c.Subagents.Temporal != tt.temporal {
				t.Errorf("engine %q temporal %+v, want %q %+v", c.Subagents.Engine, c.Subagents.Temporal, tt.engine, tt.temporal)
			}
		})
	}
}

// TestProviderWire: each built-in provider's default wire (SPEC §12), a
// config's wire replacing it, and a wire that is none of the four
// refused with the key's path.
func TestProviderWire(t *testing.T) {
	c := Default()
	for p, want := range map[string]string{"deepseek": WireChat, "openai": WireResponses, "anthropic": WireAnthropic, "gemini": WireGemini, "mock": WireMock} {
		if got := c.Provider(p).Wire; got != want {
			t.Errorf("Provider(%s).Wire = %q, want %q", p, got, want)
		}
	}
	c, err := Load(layers(t, "", "", "providers:\n  openai:\n    wire: chat\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Provider("openai").Wire; got != WireChat {
		t.Errorf("openai with wire: chat has wire %q", got)
	}
	_, err = Load(layers(t, "", "", "providers:\n  openai:\n    wire: grpc\n"))
	if err == nil || !strings.Contains(err.Error(), "providers.openai.wire") || !strings.Contains(err.Error(), "chat, responses, anthropic, gemini") {
		t.Errorf("wire: grpc: err = %v, want the key and the four wires", err)
	}
}

// TestParseSize: sizes as sandbox.limits writes them.
func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"512MiB", 512 << 20, true},
		{"512M", 512 << 20, true},
		{"2G", 2 << 30, true},
		{"1.5GiB", 3 << 29, true},
		{"64 KiB", 64 << 10, true},
		{"1MB", 1e6, true},
		{"1048576", 1 << 20, true},
		{"", 0, false},
		{"MiB", 0, false},
		{"-1M", 0, false},
		{"0", 0, false},
		{"12 parsecs", 0, false},
		{"99999999999T", 0, false},
	} {
		got, ok := ParseSize(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestLimitsLayers: a project's sandbox.limits may lower the user's, not
// raise them.
func TestLimitsLayers(t *testing.T) {
	user, err := parseConfig("u.yaml", OriginUser, []byte("sandbox: {limits: {tmp: 1G, pids: 1000}}"))
	if err != nil {
		t.Fatal(err)
	}
	proj, err := parseConfig("p.yaml", OriginTrustedProject, []byte("sandbox: {limits: {tmp: 8G, pids: 50, memory: 1G}}"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := merge([]*rawConfig{user, proj})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Limits{Tmp: 1 << 30, Pids: 1000}); cfg.Sandbox.Limits != want {
		t.Errorf("Limits = %+v, want %+v", cfg.Sandbox.Limits, want)
	}
	if want := (Limits{Tmp: 8 << 30, Pids: 50, Memory: 1 << 30}); cfg.Sandbox.LimitsCap != want {
		t.Errorf("LimitsCap = %+v, want %+v", cfg.Sandbox.LimitsCap, want)
	}
}

// An untrusted folder's skills and custom commands are named among the
// project files it ignores.
func TestProjectFilesNameSkillsAndCommands(t *testing.T) {
	cwd := t.TempDir()
	for _, f := range []string{".claude/skills/pdf/SKILL.md", ".agents/skills/x/README.md", ".reins/commands/ship.md", ".claude/commands/git/review.md"} {
		p := filepath.Join(cwd, filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	got := strings.Join(ProjectFiles(LoadOptions{Cwd: cwd, Home: t.TempDir()}), " ")
	want := strings.Join([]string{filepath.FromSlash(".claude/skills/pdf/SKILL.md"), filepath.FromSlash(".reins/commands/ship.md"), filepath.FromSlash(".claude/commands/git")}, " ")
	if got != want {
		t.Errorf("ProjectFiles %q, want %q", got, want)
	}
}
