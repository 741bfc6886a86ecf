package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reins hooks lists the user's hooks with their source and confinement,
// warns on stderr about what it skips, and escapes a hostile command.
func TestHooksListing(t *testing.T) {
	home, user := t.TempDir(), t.TempDir()
	settings := `{"hooks": {
	  "PreToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "./guard.sh \u001b]0;owned\u0007", "timeout": 5}]}],
	  "Stop": [{"hooks": [{"type": "prompt", "prompt": "is it done?"}]}]
	}}`
	if err := os.MkdirAll(filepath.Join(user, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(user, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("hooks:\n  unconfined: true\n  PostToolUse:\n    - hooks: [{type: command, command: fmt.sh}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := reinsCmd(t, home, "hooks")
	cmd.Env = append(cmd.Env, "HOME="+user)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	o := out.String()
	for _, want := range []string{"EVENT", "PreToolUse", "Write|Edit", `./guard.sh \x1b]0;owned\x07`, "5s", "unconfined", filepath.Join(user, ".claude", "settings.json"), "PostToolUse", "fmt.sh", "config.yaml"} {
		if !strings.Contains(o, want) {
			t.Errorf("listing lacks %q:\n%s", want, o)
		}
	}
	if strings.ContainsAny(o, "\x1b\x07") {
		t.Errorf("listing carries control characters: %q", o)
	}
	if !strings.Contains(errb.String(), "prompt hook is skipped") {
		t.Errorf("stderr %q", errb.String())
	}
}

// reins run shows what a hook says to the user (systemMessage) on stderr,
// escaped, as Claude Code shows systemMessage; stdout keeps only the
// answer.
func TestRunShowsHookSystemMessage(t *testing.T) {
	home, user, dir := t.TempDir(), t.TempDir(), t.TempDir()
	cmdline := `cat >/dev/null; echo '{"systemMessage": "sprint freeze until Friday \u001b]0;owned\u0007"}'`
	b, _ := json.Marshal(map[string]any{"hooks": map[string]any{"UserPromptSubmit": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmdline}}}}}})
	settings := string(b)
	if err := os.MkdirAll(filepath.Join(user, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(user, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := reinsCmd(t, home, "run", "-m", "mock/echo", "--cwd", dir, "hello")
	cmd.Env = append(cmd.Env, "HOME="+user)
	var out bytes.Buffer
	cmd.Stdout = &out
	code, stderr := exitCode(t, cmd)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, `reins: hook UserPromptSubmit: sprint freeze until Friday \x1b]0;owned\x07`) {
		t.Errorf("stderr %q", stderr)
	}
	if strings.ContainsAny(stderr, "\x1b\x07") || strings.Contains(out.String(), "sprint freeze") {
		t.Errorf("stderr %q, stdout %q", stderr, out.String())
	}
}

// reins run "/NAME" runs a custom command on its model: front matter (no
// -m given), at the provider's configured endpoint.
func TestRunCommandModel(t *testing.T) {
	url, srv := startMock(t, "replies:\n  - {text: reviewed, repeat: true}\n")
	home, dir := t.TempDir(), t.TempDir()
	for name, body := range map[string]string{
		"config.yaml":        "model: openai/big\nproviders:\n  openai: {baseURL: \"" + url + "\"}\n",
		"commands/review.md": "---\ndescription: Review\nmodel: openai/small-reviewer\n---\nReview $1",
	} {
		p := filepath.Join(home, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, prompt := range []string{"/review main.go", "plain"} {
		if code, stderr := exitCode(t, reinsCmd(t, home, "run", "--cwd", dir, prompt)); code != 0 {
			t.Fatalf("%q: exit %d: %s", prompt, code, stderr)
		}
	}
	var models []string
	for _, req := range srv.Requests() {
		var body struct{ Model string }
		json.Unmarshal(req.Body, &body)
		models = append(models, body.Model)
	}
	if len(models) != 2 || models[0] != "small-reviewer" || models[1] != "big" {
		t.Errorf("the requests' models %q", models)
	}
}
