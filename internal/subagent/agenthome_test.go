package subagent

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/tool"
)

// outsideTmp is a fresh folder outside the private folders the container
// hides (/tmp among them), as a user's home is: beside the test when the
// checkout is outside them, else in the user's cache folder (a clone in
// /tmp, as CI's may be).
func outsideTmp(t *testing.T) string {
	t.Helper()
	base := "."
	if wd, err := os.Getwd(); err == nil {
		for _, p := range []string{"/tmp", "/var/tmp", "/run", "/dev/shm"} {
			if wd == p || strings.HasPrefix(wd, p+"/") {
				cache, err := os.UserCacheDir()
				if err != nil {
					t.Fatal(err)
				}
				base = filepath.Join(cache, "reins-test")
				if err := os.MkdirAll(base, 0o700); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	d, err := os.MkdirTemp(base, "agenthome-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	abs, err := filepath.Abs(d)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// A known agent's child, confined under workspace-write with an agent file
// that asks for ~/.codex to be writable (what the README's examples did),
// writes its state into $REINS_HOME/agents/codex through CODEX_HOME, reads
// the user's auth.json there, and cannot write the user's
// ~/.codex/config.toml, nor replace the auth.json it sees.
func TestAgentHomeConfined(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox confines on Linux only")
	}
	root := outsideTmp(t)
	userHome, reinsHome, ws := filepath.Join(root, "home"), filepath.Join(root, "home", ".reins"), filepath.Join(root, "ws")
	for _, d := range []string{filepath.Join(userHome, ".codex"), reinsHome, ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfgFile, auth := filepath.Join(userHome, ".codex", "config.toml"), filepath.Join(userHome, ".codex", "auth.json")
	for f, body := range map[string]string{cfgFile: "model = \"mine\"\n", auth: `{"token":"user"}`} {
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", userHome)

	writable, dropped := childWritable([]string{filepath.Join(userHome, ".codex"), ws}, userHome)
	if !slices.Equal(dropped, []string{filepath.Join(userHome, ".codex")}) || !slices.Equal(writable, []string{ws}) {
		t.Fatalf("childWritable = %q, dropped %q", writable, dropped)
	}
	req := Request{
		Agent:      &config.Agent{Name: "codex", Provider: config.ProviderACP, Command: "npx", Args: []string{"-y", "@zed-industries/codex-acp"}},
		Cwd:        ws,
		Permission: tool.WorkspaceWrite,
		Sandbox:    sandbox.Policy{Home: reinsHome, Writable: writable},
	}
	pol := req.ChildPolicy()
	base := []string{"HOME=" + userHome, "REINS_HOME=" + reinsHome, "PATH=" + os.Getenv("PATH")}
	env, err := req.AgentHome(base, &pol, nil)
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(reinsHome, "agents", "codex")
	if env["CODEX_HOME"] != state {
		t.Fatalf("env = %v, want CODEX_HOME=%s", env, state)
	}
	if fi, err := os.Stat(state); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("state home: %v %v", fi, err)
	}

	script := `set -u
cat "$CODEX_HOME/auth.json" || echo READ-FAILED
echo session > "$CODEX_HOME/sessions.jsonl" && echo STATE-OK
echo '[mcp_servers.evil]' >> "$HOME/.codex/config.toml" && echo USER-CONFIG-WRITTEN
echo '{"token":"planted"}' > "$CODEX_HOME/auth.json" && echo AUTH-WRITTEN
true`
	cmd, err := sandbox.Command(pol, "sh", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Dir = ws
	cmd.Env = append(base, "CODEX_HOME="+env["CODEX_HOME"])
	out, err := cmd.CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("child: %v\n%s", err, out)
		}
	}
	got := string(out)
	if !strings.Contains(got, `{"token":"user"}`) || !strings.Contains(got, "STATE-OK") {
		t.Errorf("the child could not read its credential or write its state home:\n%s", got)
	}
	if strings.Contains(got, "USER-CONFIG-WRITTEN") || strings.Contains(got, "AUTH-WRITTEN") {
		t.Errorf("the child wrote the user's codex config or credential:\n%s", got)
	}
	if b, _ := os.ReadFile(cfgFile); string(b) != "model = \"mine\"\n" {
		t.Errorf("~/.codex/config.toml = %q", b)
	}
	if b, _ := os.ReadFile(auth); string(b) != `{"token":"user"}` {
		t.Errorf("~/.codex/auth.json = %q", b)
	}
	if b, err := os.ReadFile(filepath.Join(state, "sessions.jsonl")); err != nil || string(b) != "session\n" {
		t.Errorf("state written: %q %v", b, err)
	}
}

// An agent file that sets HOME or the agent's own variable keeps it; an
// unknown command gets nothing.
func TestAgentHomeLeftAlone(t *testing.T) {
	root := outsideTmp(t)
	base := []string{"HOME=" + root, "REINS_HOME=" + filepath.Join(root, ".reins")}
	for _, tt := range []struct {
		name    string
		command string
		env     map[string]string
	}{
		{"own HOME", "codex-acp", map[string]string{"HOME": "/elsewhere"}},
		{"own CODEX_HOME", "codex-acp", map[string]string{"CODEX_HOME": "/elsewhere"}},
		{"unknown agent", "my-agent", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := Request{Agent: &config.Agent{Command: tt.command}}
			var pol sandbox.Policy
			env, err := req.AgentHome(base, &pol, tt.env)
			if err != nil || len(pol.State) != 0 || len(env) != len(tt.env) {
				t.Errorf("AgentHome = %v, %v; policy state %q", env, err, pol.State)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(root, ".reins", "agents")); !os.IsNotExist(err) {
		t.Errorf("a state home was made: %v", err)
	}
}

// Without HOME and REINS_HOME in the child's environment (a bare test
// environment), no state home is made, least of all in the real home.
func TestAgentHomeNeedsHomes(t *testing.T) {
	req := Request{Agent: &config.Agent{Provider: config.ProviderPi}}
	var pol sandbox.Policy
	env, err := req.AgentHome([]string{"PATH=/usr/bin"}, &pol, nil)
	if err != nil || len(env) != 0 || len(pol.State) != 0 {
		t.Errorf("AgentHome = %v, %v; policy state %q", env, err, pol.State)
	}
	// With HOME only, $REINS_HOME is HOME/.reins, as config.Home has it.
	home := outsideTmp(t)
	env, err = req.AgentHome([]string{"HOME=" + home}, &pol, nil)
	if want := filepath.Join(home, ".reins", "agents", "pi"); err != nil || env["PI_CODING_AGENT_DIR"] != want {
		t.Errorf("AgentHome = %v, %v; want PI_CODING_AGENT_DIR=%s", env, err, want)
	}
}
