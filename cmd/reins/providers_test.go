package main

import (
	"net"
	"os"
	"path/filepath"
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
