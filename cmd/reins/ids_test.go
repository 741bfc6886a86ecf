package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm/mock"
)

// TestSessionArgExitStatus: an id that names no session and an ambiguous
// prefix are the same kind of mistake and get the same exit status (2)
// from every command that takes a SESSION; and the child id the model was
// given (`child: child-…`) names the child's session wherever an id is
// taken.
func TestSessionArgExitStatus(t *testing.T) {
	sc, err := mock.Parse([]byte(`replies:
  - match: delegate it
    toolCalls:
      - name: subagent
        arguments: {description: child work, prompt: CHILD do it}
  - match: CHILD
    text: child done
    repeat: true
  - match: child done
    text: parent done
    repeat: true
fallback: {text: again}
`))
	if err != nil {
		t.Fatal(err)
	}
	url, _, stop := mock.StartTest(sc)
	defer stop()
	home := t.TempDir()
	for i := 0; i < 2; i++ { // two sessions created the same day: "2" is an ambiguous prefix
		prompt := "plain"
		if i == 0 {
			prompt = "delegate it"
		}
		if code, stderr := exitCode(t, reinsCmd(t, home, "run", "--base-url", url, "-m", "openai/m", prompt)); code != 0 {
			t.Fatalf("setup run: exit %d: %s", code, stderr)
		}
	}
	for _, args := range [][]string{
		{"log", "nosuch"}, {"log", "2"},
		{"log", "--json", "nosuch"}, {"log", "--json", "2"},
		{"compact", "nosuch"}, {"compact", "2"},
		{"view", "--export", filepath.Join(t.TempDir(), "x.html"), "nosuch"},
		{"view", "--export", filepath.Join(t.TempDir(), "x.html"), "2"},
		{"run", "-m", "mock/echo", "--resume", "nosuch", "x"},
		{"run", "-m", "mock/echo", "--resume", "2", "x"},
	} {
		if code, stderr := exitCode(t, reinsCmd(t, home, args...)); code != exitUsage {
			t.Errorf("%v: exit %d, want 2; stderr %s", args, code, stderr)
		}
	}

	// The child id the model was shown, from the parent's log.
	logs, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "session.jsonl"))
	var childID, childSession string
	for _, p := range logs {
		b, _ := os.ReadFile(p)
		if m := regexp.MustCompile(`child: (child-[0-9a-f]{8})`).FindSubmatch(b); m != nil {
			childID = string(m[1])
		}
		if bytes.Contains(bytes.SplitN(b, []byte("\n"), 2)[0], []byte(`"parentSession"`)) {
			childSession = filepath.Base(filepath.Dir(p))
		}
	}
	if childID == "" || childSession == "" {
		t.Fatalf("no child id (%q) or child session (%q) in %v", childID, childSession, logs)
	}
	cmd := reinsCmd(t, home, "log", "--json", childID)
	var out bytes.Buffer
	cmd.Stdout = &out
	if code, stderr := exitCode(t, cmd); code != 0 || !strings.Contains(out.String(), `"id":"`+childSession+`"`) {
		t.Errorf("reins log %s: exit %d, stderr %s, stdout %.200s; want the child session %s", childID, code, stderr, out.String(), childSession)
	}
}

// TestModelsEscapesConfigNames: model and alias names from a config file
// reach the terminal escaped.
func TestModelsEscapesConfigNames(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte("modelAliases:\n  \"al\\e]0;pwned\\a\": \"openai/x\\e[2J\"\nmodels:\n  \"openai/m\\e[31mred\": {contextWindow: 1000}\n"), 0o644)
	cmd := reinsCmd(t, t.TempDir(), "models", "--config", cfg)
	var out bytes.Buffer
	cmd.Stdout = &out
	if code, stderr := exitCode(t, cmd); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if bytes.ContainsAny(out.Bytes(), "\x1b\a") {
		t.Errorf("raw escape bytes in:\n%q", out.String())
	}
	for _, want := range []string{`m\x1b[31mred`, `al\x1b]0;pwned\x07 = openai/x\x1b[2J`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %s:\n%s", want, out.String())
		}
	}
}
