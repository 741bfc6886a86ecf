package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm/mock"
)

// TestProviderWires (issue 48): one wire per attempt, chosen by name.
// openai/ at a base URL other than OpenAI's speaks chat completions (an
// OpenAI-compatible server) unless --wire says otherwise; a provider of
// the user's own (providers.NAME: {wire, baseURL}) and a preset with
// --base-url work; every answer comes from the wire the test expects.
func TestProviderWires(t *testing.T) {
	url, srv := startMock(t, "fallback:\n  text: WIRE-OK\n")
	base := strings.TrimSuffix(url, "/v1")
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("providers:\n  myollama: {wire: chat, baseURL: '"+url+"'}\n  mygw: {wire: anthropic, baseURL: '"+base+"'}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		wire string
	}{
		{[]string{"-m", "openai/test", "--base-url", url}, mock.WireOpenAI},
		{[]string{"-m", "openai/test", "--base-url", url, "--wire", "responses"}, mock.WireResponses},
		{[]string{"-m", "deepseek/test", "--base-url", base, "--wire", "anthropic"}, mock.WireAnthropic},
		{[]string{"-m", "openai/test", "--base-url", base, "--wire", "gemini"}, mock.WireGemini},
		{[]string{"-m", "myollama/llama3", "--config", cfg}, mock.WireOpenAI},
		{[]string{"-m", "mygw/claude", "--config", cfg}, mock.WireAnthropic},
		{[]string{"-m", "ollama/llama3", "--base-url", url}, mock.WireOpenAI},
	} {
		n := srv.Count()
		cmd := reinsCmd(t, t.TempDir(), append(append([]string{"run"}, tc.args...), "hello")...)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "WIRE-OK") {
			t.Errorf("reins run %q: %v\n%s", tc.args, err, out)
			continue
		}
		if r, ok := srv.Request(n); !ok || r.Wire != tc.wire {
			t.Errorf("reins run %q went by %q, want %q", tc.args, r.Wire, tc.wire)
		}
	}
	// A wire that is none is a usage error naming the flag.
	code, stderr := exitCode(t, reinsCmd(t, t.TempDir(), "run", "-m", "openai/test", "--base-url", url, "--wire", "grpc", "hi"))
	if code != exitUsage || !strings.Contains(stderr, "--wire: want chat, responses, anthropic, gemini") {
		t.Errorf("--wire grpc: exit %d, stderr %q", code, stderr)
	}
	// A provider of one's own without its base URL is refused, named.
	if err := os.WriteFile(cfg, []byte("providers:\n  myollama: {wire: chat}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr = exitCode(t, reinsCmd(t, t.TempDir(), "run", "-m", "myollama/llama3", "--config", cfg, "hi"))
	if code != exitUsage || !strings.Contains(stderr, "providers.myollama") || !strings.Contains(stderr, "baseURL") {
		t.Errorf("a provider without baseURL: exit %d, stderr %q", code, stderr)
	}
}

// TestNoKeyNamesEveryProvider (issue 48): with no key at all, the message
// names every provider's key variable and -m, not just the default's.
func TestNoKeyNamesEveryProvider(t *testing.T) {
	for _, args := range [][]string{{"run", "hi"}, {"run", "-m", "sonnet", "hi"}} {
		cmd := reinsCmd(t, t.TempDir(), args...)
		code, stderr := exitCode(t, cmd)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 {
			t.Errorf("reins %q: exit %d, stderr %q; want 2 and one line", args, code, stderr)
		}
		for _, want := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "DEEPSEEK_API_KEY", "GEMINI_API_KEY", "-m "} {
			if !strings.Contains(stderr, want) {
				t.Errorf("reins %q: stderr %q does not name %s", args, stderr, want)
			}
		}
	}
}

// TestTransportErrorNamesEndpoint (issue 48): an endpoint nobody listens
// on fails after the retry policy with its host and port named.
func TestTransportErrorNamesEndpoint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nobody listens there now
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("providers:\n  openai:\n    retry: {maxRetries: 2, initialDelay: 1ms, maxDelay: 2ms}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := reinsCmd(t, t.TempDir(), "run", "--config", cfg, "-m", "openai/test", "--base-url", "http://"+addr+"/v1", "hi")
	code, stderr := exitCode(t, cmd)
	want := "TRANSPORT (connect " + addr + ": connection refused)"
	if code != exitFailed || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
}

// TestProviderHeadersSent (SPEC §13 "providers by name"): a provider's
// configured headers reach the server with ${VAR} expanded, on the wire
// the provider speaks, and the variable reaches no tool.
func TestProviderHeadersSent(t *testing.T) {
	url, _ := startMock(t, "fallback:\n  text: HDR-OK\n")
	target, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan http.Header, 4)
	proxy := httputil.NewSingleHostReverseProxy(&neturl.URL{Scheme: target.Scheme, Host: target.Host})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Header.Clone():
		default:
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	home := t.TempDir()
	cfg := "providers:\n  mygw:\n    wire: chat\n    baseURL: '" + front.URL + "/v1'\n    headers: {X-Team: red, Authorization: 'Bearer ${MYGW_TOKEN}'}\n    models: [small]\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := reinsCmd(t, home, "run", "-m", "mygw/small", "hello")
	cmd.Env = append(cmd.Env, "MYGW_TOKEN=tok-abcdef123456")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "HDR-OK") {
		t.Fatalf("reins run: %v\n%s", err, out)
	}
	select {
	case h := <-got:
		if h.Get("X-Team") != "red" || h.Get("Authorization") != "Bearer tok-abcdef123456" {
			t.Errorf("headers at the server: %v", h)
		}
	default:
		t.Fatal("the server saw no request")
	}
	if strings.Contains(string(out), "tok-abcdef") {
		t.Errorf("the header's value is on the output: %s", out)
	}
	// The header's variable is a secret: reins doctor / the sandbox scrub
	// it like a key (SecretVars); the listed model is offered.
	cmd = reinsCmd(t, home, "models")
	out, err = cmd.CombinedOutput()
	if err != nil || !regexp.MustCompile(`(?m)^mygw\s+small\s`).Match(out) {
		t.Errorf("reins models does not list mygw/small: %v\n%s", err, out)
	}
}

// TestModelsListsPresets (SPEC §13): `reins models` and its --json list
// the presets, marked so, with whether their key variable is set (never
// its value).
func TestModelsListsPresets(t *testing.T) {
	home := t.TempDir()
	cmd := reinsCmd(t, home, "models")
	cmd.Env = append(cmd.Env, "GROQ_API_KEY=groq-secret-value")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("reins models: %v\n%s", err, out)
	}
	for _, re := range []string{
		`(?m)^groq\s+preset\s+chat\s+https://api.groq.com/openai/v1\s+GROQ_API_KEY \(set\)$`,
		`(?m)^openrouter\s+preset\s+chat\s+\S+\s+OPENROUTER_API_KEY \(not set\)$`,
		`(?m)^together\s+preset\s`,
		`(?m)^ollama\s+preset\s+chat\s+http://localhost:11434/v1\s+OLLAMA_API_KEY \(not set; optional\)$`,
		`(?m)^lmstudio\s+preset\s`,
		`(?m)^vllm\s+preset\s`,
		`(?m)^anthropic\s+builtin\s+anthropic\s`,
	} {
		if !regexp.MustCompile(re).Match(out) {
			t.Errorf("reins models lacks %s:\n%s", re, out)
		}
	}
	if strings.Contains(string(out), "groq-secret-value") {
		t.Error("reins models shows a key's value")
	}
	cmd = reinsCmd(t, home, "models", "--json")
	cmd.Env = append(cmd.Env, "GROQ_API_KEY=groq-secret-value")
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("reins models --json: %v", err)
	}
	var doc struct {
		Models []struct {
			Provider, Model string
		}
		Providers []struct {
			Name        string
			Kind        string
			Preset      bool
			KeyEnv      string
			KeySet      bool
			KeyOptional bool
		}
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("reins models --json: %v\n%s", err, out)
	}
	presets := map[string]bool{}
	for _, p := range doc.Providers {
		if p.Preset != (p.Kind == "preset") {
			t.Errorf("%s: preset %v, kind %s", p.Name, p.Preset, p.Kind)
		}
		if p.Preset {
			presets[p.Name] = true
		}
		switch p.Name {
		case "groq":
			if !p.KeySet || p.KeyEnv != "GROQ_API_KEY" || p.KeyOptional {
				t.Errorf("groq: %+v", p)
			}
		case "ollama":
			if p.KeySet || !p.KeyOptional {
				t.Errorf("ollama: %+v", p)
			}
		case "openrouter":
			if p.KeySet || p.KeyOptional {
				t.Errorf("openrouter: %+v", p)
			}
		}
	}
	for _, name := range []string{"openrouter", "ollama", "lmstudio", "vllm", "groq", "together"} {
		if !presets[name] {
			t.Errorf("--json lacks preset %s: %v", name, presets)
		}
	}
	if len(doc.Models) == 0 || strings.Contains(string(out), "groq-secret-value") {
		t.Errorf("--json: %d models; key value shown: %v", len(doc.Models), strings.Contains(string(out), "groq-secret-value"))
	}
}

// TestDoctorSaysModelAndKey (a newcomer's first half hour): reins doctor
// says which model a run without -m uses and whether its key is set, and
// where to go when it is not — before a run fails on it.
func TestDoctorSaysModelAndKey(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want []string
	}{
		{nil, []string{"model: deepseek/deepseek-chat (the default", "its key DEEPSEEK_API_KEY is not set", "reins models", "reins demo"}},
		{[]string{"ANTHROPIC_API_KEY=sk-doctor-secret"}, []string{"model: anthropic/", "ANTHROPIC_API_KEY is set", "ready"}},
	} {
		cmd := reinsCmd(t, t.TempDir(), "doctor")
		cmd.Env = append(cmd.Env, tc.env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("reins doctor: %v\n%s", err, out)
		}
		var line string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "model: ") {
				line = l
			}
		}
		for _, w := range tc.want {
			if !strings.Contains(line, w) {
				t.Errorf("env %v: model line %q lacks %q", tc.env, line, w)
			}
		}
		if strings.Contains(string(out), "sk-doctor-secret") {
			t.Error("reins doctor shows a key's value")
		}
	}
}

// TestRunEmptyStdinSaysHow (a newcomer's first half hour): `reins run`
// with nothing on stdin says how to give the task, not only that none
// came.
func TestRunEmptyStdinSaysHow(t *testing.T) {
	cmd := reinsCmd(t, t.TempDir(), "run")
	cmd.Stdin = strings.NewReader("\n")
	code, stderr := exitCode(t, cmd)
	if code != exitUsage || !strings.Contains(stderr, `reins run "TASK"`) || !strings.Contains(stderr, "echo TASK | reins run") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
