//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A harness is one agent CLI under test. Each keeps one home directory for
// the whole invocation (warm, like a user's machine); every run gets the
// workload's workspace as its working directory.
type harness struct {
	name string
	// script names the scripts and tools this harness uses (default name).
	script string
	// missing says why the harness cannot run here ("" when it can).
	missing string
	// notes are caveats printed under the table.
	notes []string
	home  string
	// version is the startup command.
	version func() *exec.Cmd
	// task builds the command for a task prompt against the mock at url
	// (a base URL ending in /v1); nil when only startup is measured.
	task func(ws, url, prompt string, extra []string) (*exec.Cmd, error)
}

func (c *config) harnesses() []*harness {
	var hs []*harness
	add := func(h *harness) {
		if c.harnessF != nil && !c.harnessF[h.name] {
			return
		}
		h.home = filepath.Join(c.work, "home-"+h.name)
		os.MkdirAll(h.home, 0o755)
		hs = append(hs, h)
	}
	add(c.reinsHarness("reins", c.reins))
	if c.compare != "" {
		add(c.reinsHarness("reins-before", c.compare))
	}
	add(c.piHarness())
	add(c.opencodeHarness())
	add(c.codexHarness())
	add(c.geminiHarness())
	add(c.dshHarness())
	return hs
}

// baseEnv is the environment every harness runs with: the caller's, with
// HOME moved into the harness's own home and provider keys removed so no
// run can reach a real provider.
func baseEnv(home string, kv ...string) []string {
	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		switch {
		case k == "HOME", k == "PWD", strings.HasSuffix(k, "_API_KEY"), strings.HasSuffix(k, "_BASE_URL"),
			strings.HasPrefix(k, "XDG_"), strings.HasPrefix(k, "REINS_"), strings.HasPrefix(k, "PI_"),
			strings.HasPrefix(k, "OPENCODE"), k == "NO_COLOR":
			continue
		}
		env = append(env, e)
	}
	return append(append(env, "HOME="+home, "NO_COLOR=1"), kv...)
}

func (c *config) reinsHarness(name, bin string) *harness {
	h := &harness{name: name, script: "reins"}
	h.version = func() *exec.Cmd {
		cmd := exec.Command(bin, "version")
		cmd.Env = baseEnv(h.home, "REINS_HOME="+h.home)
		return cmd
	}
	h.task = func(ws, url, prompt string, extra []string) (*exec.Cmd, error) {
		args := append([]string{"run", "-m", "openai/mock-model", "--base-url", url, "--cwd", ws}, extra...)
		cmd := exec.Command(bin, append(args, prompt)...)
		cmd.Dir = ws
		cmd.Env = append(baseEnv(h.home, "REINS_HOME="+h.home), "PWD="+ws)
		return cmd, nil
	}
	return h
}

func (c *config) piHarness() *harness {
	bin := filepath.Join(c.peers, "node_modules", ".bin", "pi")
	h := &harness{name: "pi", notes: []string{
		"pi: @mariozechner/pi-coding-agent 0.73.1, `pi -p`, a custom openai-completions provider in models.json, PI_OFFLINE=1; pi has no subagents (its README: \"No sub-agents\"), so it has no delegation row.",
	}}
	if _, err := os.Stat(bin); err != nil {
		h.missing = "not installed in bench/peers (bench/run.sh installs it)"
	}
	agentDir := func() string { return filepath.Join(h.home, "agent") }
	env := func() []string { return baseEnv(h.home, "PI_CODING_AGENT_DIR="+agentDir(), "PI_OFFLINE=1") }
	h.version = func() *exec.Cmd {
		cmd := exec.Command(bin, "--version")
		cmd.Env = env()
		return cmd
	}
	h.task = func(ws, url, prompt string, _ []string) (*exec.Cmd, error) {
		models := map[string]any{"providers": map[string]any{"mock": map[string]any{
			"baseUrl": url, "api": "openai-completions", "apiKey": "none",
			"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
			"models": []any{map[string]any{"id": "mock-model"}},
		}}}
		if err := writeJSONFile(filepath.Join(agentDir(), "models.json"), models); err != nil {
			return nil, err
		}
		cmd := exec.Command(bin, "-p", "--model", "mock/mock-model", prompt)
		cmd.Dir = ws
		cmd.Env = append(env(), "PWD="+ws)
		return cmd, nil
	}
	return h
}

func (c *config) opencodeHarness() *harness {
	// The opencode-ai package's own bin is a shell stub until its
	// postinstall links the platform binary; the binary itself ships in
	// the opencode-linux-x64 registry package, so run it directly.
	bin := filepath.Join(c.peers, "node_modules", "opencode-linux-x64", "bin", "opencode")
	h := &harness{name: "opencode", notes: []string{
		"opencode: opencode-ai 1.18.33 (its linux-x64 binary from the opencode-linux-x64 npm package), `opencode run`, a custom @ai-sdk/openai-compatible provider in opencode.json; it also sends one session-title request per session, which the scripts answer.",
	}}
	if _, err := os.Stat(bin); err != nil {
		h.missing = "not installed in bench/peers (bench/run.sh installs it)"
	}
	// The provider package opencode installs on first use is cached
	// across invocations so a run never waits for npm.
	cache := filepath.Join(c.peers, "cache")
	env := func() []string {
		return baseEnv(h.home,
			"XDG_CACHE_HOME="+cache,
			"XDG_DATA_HOME="+filepath.Join(h.home, "data"),
			"XDG_CONFIG_HOME="+filepath.Join(h.home, "config"),
			"XDG_STATE_HOME="+filepath.Join(h.home, "state"),
			"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1",
			"OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_SHARE=1")
	}
	h.version = func() *exec.Cmd {
		cmd := exec.Command(bin, "--version")
		cmd.Env = env()
		return cmd
	}
	h.task = func(ws, url, prompt string, _ []string) (*exec.Cmd, error) {
		cfg := map[string]any{
			"$schema": "https://opencode.ai/config.json",
			"provider": map[string]any{"mock": map[string]any{
				"npm": "@ai-sdk/openai-compatible", "name": "Mock",
				"options": map[string]any{"baseURL": url, "apiKey": "none"},
				"models":  map[string]any{"mock-model": map[string]any{"name": "mock"}},
			}},
			"model": "mock/mock-model", "autoupdate": false, "share": "disabled",
		}
		if err := writeJSONFile(filepath.Join(ws, "opencode.json"), cfg); err != nil {
			return nil, err
		}
		cmd := exec.Command(bin, "run", "--model", "mock/mock-model", prompt)
		cmd.Dir = ws
		cmd.Env = append(env(), "PWD="+ws) // opencode takes its directory from $PWD
		return cmd, nil
	}
	return h
}

func (c *config) codexHarness() *harness {
	// The platform binary of @openai/codex, run directly (its bin is a
	// node wrapper that spawns it).
	bin := filepath.Join(c.peers, "node_modules", "@openai", "codex-linux-x64", "vendor", "x86_64-unknown-linux-musl", "bin", "codex")
	h := &harness{name: "codex", notes: []string{
		"codex: @openai/codex 0.171.0 (its linux-x64 build), `codex exec --skip-git-repo-check`, a custom provider on the Responses wire by -c flags (model gpt-5.3-codex), `-s danger-full-access` (its read-only sandbox needs bubblewrap, which the machine lacks); it reads with its exec_command tool (`cat`), so its two-step has one command where the others read a file; no subagents headless.",
	}}
	if _, err := os.Stat(bin); err != nil {
		h.missing = "not installed in bench/peers (bench/run.sh installs it)"
	}
	env := func() []string { return baseEnv(h.home, "MOCK_API_KEY=none") }
	h.version = func() *exec.Cmd {
		cmd := exec.Command(bin, "--version")
		cmd.Env = env()
		return cmd
	}
	h.task = func(ws, url, prompt string, _ []string) (*exec.Cmd, error) {
		cmd := exec.Command(bin, "exec", "--skip-git-repo-check",
			"-c", "model_provider=mock",
			"-c", `model_providers.mock={name="mock",base_url="`+url+`",wire_api="responses",env_key="MOCK_API_KEY"}`,
			"-c", "model=gpt-5.3-codex", "-s", "danger-full-access", prompt)
		cmd.Dir = ws
		cmd.Env = append(env(), "PWD="+ws)
		return cmd, nil
	}
	return h
}

func (c *config) geminiHarness() *harness {
	bin := filepath.Join(c.peers, "node_modules", ".bin", "gemini")
	h := &harness{name: "gemini", notes: []string{
		"gemini: @google/gemini-cli 0.61.0, `gemini -p -m gemini-2.5-flash` (-m spares the model router's extra request), GEMINI_API_KEY and GOOGLE_GEMINI_BASE_URL pointing at the mock's Gemini wire, security.auth.selectedType gemini-api-key in its settings.json, GEMINI_CLI_TRUST_WORKSPACE=true; no subagents headless.",
	}}
	if _, err := os.Stat(bin); err != nil {
		h.missing = "not installed in bench/peers (bench/run.sh installs it)"
	}
	env := func() []string { return baseEnv(h.home, "GEMINI_API_KEY=none") }
	h.version = func() *exec.Cmd {
		cmd := exec.Command(bin, "--version")
		cmd.Env = env()
		return cmd
	}
	h.task = func(ws, url, prompt string, _ []string) (*exec.Cmd, error) {
		// Headless, it wants the auth type chosen in its settings
		// ("Invalid auth method selected" otherwise) and the workspace
		// trusted.
		settings := map[string]any{"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}}}
		if err := writeJSONFile(filepath.Join(h.home, ".gemini", "settings.json"), settings); err != nil {
			return nil, err
		}
		cmd := exec.Command(bin, "-p", prompt, "-m", "gemini-2.5-flash")
		cmd.Dir = ws
		cmd.Env = append(env(), "PWD="+ws, "GEMINI_CLI_TRUST_WORKSPACE=true", "GOOGLE_GEMINI_BASE_URL="+strings.TrimSuffix(url, "/v1"))
		return cmd, nil
	}
	return h
}

func (c *config) dshHarness() *harness {
	bin := filepath.Join(c.peers, "node_modules", ".bin", "dsh")
	h := &harness{name: "dsh", notes: []string{
		"dsh: DeepSeek Harness runs here only as far as `dsh --version` (the launcher). The latest @deepseek-ai/dsh (0.1.5-rc.2) does not install: it depends on @deepseek-ai/dsh-acp-app@^0.1.5-rc.2, which is not published. 0.1.0-rc.8 installs (npm install --legacy-peer-deps --ignore-scripts, with its 17 unlisted @deepseek-ai peer packages added to bench/peers/package.json), but its headless profile cannot boot: on Node 20 two plugins need Node >= 22 APIs (zlib zstd, module.stripTypeScriptTypes), and on Node 22 the launcher calls hmr.registerConfig, which no published @deepseek-ai/cordis-plugin-hmr (1.0.16–1.0.19) provides. So it has no task rows.",
	}}
	if _, err := os.Stat(bin); err != nil {
		h.missing = "not installed in bench/peers (bench/run.sh installs it)"
	}
	h.version = func() *exec.Cmd {
		cmd := exec.Command(bin, "--version")
		cmd.Env = baseEnv(h.home, "DSH_HOME="+filepath.Join(h.home, "dsh"))
		return cmd
	}
	return h
}

// scriptName is the name the harness's scripts and tool table go by.
func (h *harness) scriptName() string {
	if h.script != "" {
		return h.script
	}
	return h.name
}

func writeJSONFile(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return os.WriteFile(path, b, 0o644)
}
