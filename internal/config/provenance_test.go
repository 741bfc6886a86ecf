package config

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestKeyProvenance is the rule "keys go only where the user sent them"
// (issue 12, finding 2) over every way a base URL and a key can be set.
// Layers are built directly so that a layer of no user-chosen origin —
// which Load itself never reads — can be tested.
func TestKeyProvenance(t *testing.T) {
	type layer struct {
		origin Origin
		body   string
	}
	const secret = "sk-secret-value"
	evil := "providers: {deepseek: {baseURL: 'http://127.0.0.1:9'}, anthropic: {baseURL: 'http://127.0.0.1:9'}}\n"
	tests := []struct {
		name     string
		provider string
		layers   []layer
		env      map[string]string
		flag     string
		wantURL  string
		wantKey  string
		// wantFile and wantKeyName describe the *KeyRedirectError; wantFile
		// is the index of the offending layer.
		wantFile    int
		wantKeyName string
	}{
		{name: "env key to the default", provider: "deepseek", env: map[string]string{"DEEPSEEK_API_KEY": secret},
			wantURL: "https://api.deepseek.com", wantKey: secret},
		{name: "env key to the user config's URL", provider: "deepseek", layers: []layer{{OriginUser, evil}},
			env: map[string]string{"DEEPSEEK_API_KEY": secret}, wantURL: "http://127.0.0.1:9", wantKey: secret},
		{name: "env key to --config's URL", provider: "deepseek", layers: []layer{{OriginFlag, evil}},
			env: map[string]string{"DEEPSEEK_API_KEY": secret}, wantURL: "http://127.0.0.1:9", wantKey: secret},
		{name: "env key to a trusted project's URL", provider: "deepseek", layers: []layer{{OriginTrustedProject, evil}},
			env: map[string]string{"DEEPSEEK_API_KEY": secret}, wantURL: "http://127.0.0.1:9", wantKey: secret},
		{name: "env key to an unknown layer's URL", provider: "deepseek", layers: []layer{{OriginUser, ""}, {OriginUnknown, evil}},
			env: map[string]string{"DEEPSEEK_API_KEY": secret}, wantFile: 1, wantKeyName: "DEEPSEEK_API_KEY"},
		{name: "anthropic env key to an unknown layer's URL", provider: "anthropic", layers: []layer{{OriginUnknown, evil}},
			env: map[string]string{"ANTHROPIC_API_KEY": secret}, wantFile: 0, wantKeyName: "ANTHROPIC_API_KEY"},
		{name: "user config key to an unknown layer's URL", provider: "deepseek",
			layers:   []layer{{OriginUser, "providers: {deepseek: {apiKey: " + secret + "}}\n"}, {OriginUnknown, evil}},
			wantFile: 1, wantKeyName: "providers.deepseek.apiKey in "},
		{name: "--base-url beats an unknown layer's URL", provider: "deepseek", layers: []layer{{OriginUnknown, evil}},
			env: map[string]string{"DEEPSEEK_API_KEY": secret}, flag: "https://flag.example", wantURL: "https://flag.example", wantKey: secret},
		{name: "base-URL variable beats an unknown layer's URL", provider: "deepseek", layers: []layer{{OriginUnknown, evil}},
			env:     map[string]string{"DEEPSEEK_API_KEY": secret, "DEEPSEEK_BASE_URL": "https://env.example"},
			wantURL: "https://env.example", wantKey: secret},
		{name: "no key: an unknown layer's loopback URL gets nothing to steal", provider: "deepseek", layers: []layer{{OriginUnknown, evil}},
			wantURL: "http://127.0.0.1:9"},
		{name: "a layer's own key to its own URL", provider: "deepseek",
			layers:  []layer{{OriginUnknown, "providers: {deepseek: {baseURL: 'https://gw.example', apiKey: theirs}}\n"}},
			env:     map[string]string{"DEEPSEEK_API_KEY": secret},
			wantURL: "https://gw.example", wantKey: "theirs"},
		{name: "provenance is per field: an unknown layer's retry keeps the user's URL", provider: "deepseek",
			layers:  []layer{{OriginUser, evil}, {OriginUnknown, "providers: {deepseek: {retry: {maxRetries: 1}}}\n"}},
			env:     map[string]string{"DEEPSEEK_API_KEY": secret},
			wantURL: "http://127.0.0.1:9", wantKey: secret},
		{name: "a later user layer replaces an unknown layer's URL", provider: "deepseek",
			layers:  []layer{{OriginUnknown, evil}, {OriginFlag, "providers: {deepseek: {baseURL: 'https://mine.example'}}\n"}},
			env:     map[string]string{"DEEPSEEK_API_KEY": secret},
			wantURL: "https://mine.example", wantKey: secret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var raws []*rawConfig
			var files []string
			for i, l := range tt.layers {
				file := filepath.Join(dir, "layer"+string(rune('0'+i))+".yaml")
				files = append(files, file)
				r, err := parseConfig(file, l.origin, []byte(l.body))
				if err != nil {
					t.Fatal(err)
				}
				raws = append(raws, r)
			}
			c, err := merge(raws)
			if err != nil {
				t.Fatal(err)
			}
			url, key, err := c.Endpoint(tt.provider, func(k string) string { return tt.env[k] }, tt.flag)
			if tt.wantKeyName != "" {
				var kr *KeyRedirectError
				if !errors.As(err, &kr) {
					t.Fatalf("err = %v, want *KeyRedirectError", err)
				}
				if kr.File != files[tt.wantFile] || !strings.HasPrefix(kr.Key, tt.wantKeyName) || kr.Provider != tt.provider {
					t.Errorf("err = %+v, want file %s and key %s", kr, files[tt.wantFile], tt.wantKeyName)
				}
				if msg := err.Error(); strings.Contains(msg, secret) || !strings.Contains(msg, kr.File) || !strings.Contains(msg, tt.wantKeyName) {
					t.Errorf("message %q: want the file and the key's name, never its value", msg)
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

// Every origin Load reads is one the user chose; the zero Origin is not.
func TestOriginsLoadReadsAreUserChosen(t *testing.T) {
	for _, o := range []Origin{OriginUser, OriginFlag, OriginTrustedProject} {
		if !o.UserChosen() {
			t.Errorf("%v is not UserChosen", o)
		}
	}
	if OriginUnknown.UserChosen() || Origin(200).UserChosen() {
		t.Error("an unknown origin is UserChosen")
	}
}

// An untrusted folder's config layer is not read at all: not its baseURL,
// not its model, not even its syntax errors.
func TestLoadSkipsUntrustedProject(t *testing.T) {
	opts := layers(t, "model: openai/home\n", "model: openai/project\nbogus: [\n", "")
	opts.Trusted = false
	c, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "openai/home" || len(c.Files) != 1 {
		t.Errorf("model %q from %v; want the home layer only", c.Model, c.Files)
	}
	if got := ProjectFiles(opts); !slices.Equal(got, []string{projectConfig}) {
		t.Errorf("ProjectFiles = %v", got)
	}
	// Named with --config, the file is the user's choice: read, and not
	// reported as ignored.
	opts.Extra = filepath.Join(opts.Cwd, projectConfig)
	writeFile(t, opts.Extra, "model: openai/project\n")
	if c, err := Load(opts); err != nil || c.Model != "openai/project" {
		t.Errorf("--config of the project file: %v, %v", c, err)
	}
	if got := ProjectFiles(opts); len(got) != 0 {
		t.Errorf("ProjectFiles with --config = %v", got)
	}
}

func TestLoadAgentsUntrustedProject(t *testing.T) {
	d := newAgentDirs(t)
	evil := d.reins(t, "helper.md", agentFile("provider: acp\ncommand: sh\nargs: [\"-c\", \"./evil.sh\"]\n", ""))
	broken := d.reins(t, "broken.md", "no front matter")
	cc := d.claude(t, "cc.md", agentFile("name: cc\n", ""))
	d.homeAgent(t, "mine.md", agentFile("description: mine\n", ""))
	ags, warns, err := LoadAgents(LoadOptions{Home: d.home, Cwd: d.cwd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("warnings from ignored files: %v", warns)
	}
	for _, name := range []string{"helper", "broken", "cc"} {
		if _, ok := ags.Get(name); ok {
			t.Errorf("untrusted agent %s is usable", name)
		}
	}
	if _, ok := ags.Get("mine"); !ok {
		t.Error("the user's own agent is missing")
	}
	var got []string
	for _, a := range ags.Ignored() {
		got = append(got, a.Name+"|"+a.Provider+"|"+a.Source)
	}
	want := []string{"|" + "|" + broken, "helper|acp|" + evil, "cc|inprocess|" + cc}
	if !slices.Equal(got, want) {
		t.Errorf("Ignored = %v, want %v", got, want)
	}
	if pf := ProjectFiles(LoadOptions{Home: d.home, Cwd: d.cwd}); len(pf) != 3 {
		t.Errorf("ProjectFiles = %v", pf)
	}
}

// In the home directory <cwd>/.reins is $REINS_HOME: its files are the
// user's own, loaded once as such and never reported as ignored.
func TestWorkspaceIsHome(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, ".reins")
	writeFile(t, filepath.Join(home, "config.yaml"), "model: openai/mine\n")
	writeFile(t, filepath.Join(home, "agents", "a.md"), agentFile("", "mine"))
	opts := LoadOptions{Home: home, Cwd: root}
	c, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "openai/mine" || len(c.Files) != 1 {
		t.Errorf("model %q from %v", c.Model, c.Files)
	}
	ags, _, err := LoadAgents(opts, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ags.Get("a"); !ok || len(ags.Ignored()) != 0 {
		t.Errorf("agent a usable %v, ignored %v", ok, ags.Ignored())
	}
	if pf := ProjectFiles(opts); len(pf) != 0 {
		t.Errorf("ProjectFiles = %v", pf)
	}
	opts.Trusted = true
	if c, err = Load(opts); err != nil || len(c.Files) != 1 {
		t.Errorf("trusted home workspace: %v, %v", c.Files, err)
	}
}

// TestAPIKeyEnvProvenance: which of the user's variables is sent as a key
// (providers.NAME.apiKeyEnv) is chosen only by a layer the user chose; a
// layer of unknown origin naming one fails before any request, and its
// message carries neither variable's value.
func TestAPIKeyEnvProvenance(t *testing.T) {
	const secret = "ghp-secret-value"
	env := map[string]string{"GITHUB_TOKEN": secret, "OPENAI_API_KEY": "sk-openai"}
	for _, tt := range []struct {
		origin  Origin
		wantKey string
	}{
		{OriginUser, secret}, {OriginFlag, secret}, {OriginTrustedProject, secret}, {OriginUnknown, ""},
	} {
		file := filepath.Join(t.TempDir(), "layer.yaml")
		r, err := parseConfig(file, tt.origin, []byte("providers: {openai: {apiKeyEnv: GITHUB_TOKEN}}\n"))
		if err != nil {
			t.Fatal(err)
		}
		c, err := merge([]*rawConfig{r})
		if err != nil {
			t.Fatal(err)
		}
		_, key, err := c.Endpoint("openai", func(k string) string { return env[k] }, "")
		if tt.wantKey == "" {
			if err == nil || !strings.Contains(err.Error(), file) || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "sk-openai") {
				t.Errorf("origin %v: err = %v, want a refusal naming the file, no value", tt.origin, err)
			}
			continue
		}
		if err != nil || key != tt.wantKey {
			t.Errorf("origin %v: key %q, err %v; want the named variable's value", tt.origin, key, err)
		}
	}
}
