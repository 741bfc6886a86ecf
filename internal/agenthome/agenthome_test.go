package agenthome

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/sandbox"
)

func TestLookup(t *testing.T) {
	for _, tt := range []struct {
		command string
		args    []string
		want    string // "" unknown
	}{
		{"codex-acp", nil, "codex"},
		{"/usr/local/bin/codex-acp", nil, "codex"},
		{"npx", []string{"-y", "@zed-industries/codex-acp"}, "codex"},
		{"npx", []string{"--yes", "@zed-industries/claude-agent-acp@0.5.1"}, "claude"},
		{"claude-agent-acp", nil, "claude"},
		{"gemini", []string{"--acp"}, "gemini"},
		{"npx", []string{"@google/gemini-cli", "--acp"}, "gemini"},
		{"opencode", []string{"acp"}, "opencode"},
		{"qwen", []string{"--acp"}, "qwen"},
		{"cline", []string{"--acp"}, "cline"},
		{"pi", nil, "pi"},
		{"pnpm", []string{"dlx", "@zed-industries/codex-acp"}, "codex"},
		{"npx", []string{"-y", "some-other-agent"}, ""},
		{"my-agent", nil, ""},
		{"npx", nil, ""},
	} {
		a, ok := Lookup(tt.command, tt.args)
		if ok != (tt.want != "") || a.Name != tt.want {
			t.Errorf("Lookup(%q, %q) = %q, %v; want %q", tt.command, tt.args, a.Name, ok, tt.want)
		}
	}
}

func TestKnownNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range Known() {
		if seen[a.Name] {
			t.Errorf("%s twice", a.Name)
		}
		seen[a.Name] = true
		for _, c := range a.Commands {
			if b, _ := Lookup(c, nil); b.Name != a.Name && filepath.Base(c) == c {
				t.Errorf("command %s finds %s, want %s", c, b.Name, a.Name)
			}
		}
	}
}

func setup(t *testing.T) (userHome, reinsHome string) {
	t.Helper()
	root := t.TempDir()
	userHome, reinsHome = filepath.Join(root, "home"), filepath.Join(root, "reins")
	if err := os.MkdirAll(filepath.Join(userHome, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(userHome, ".gemini", "oauth_creds.json"), []byte("creds"), 0o600); err != nil {
		t.Fatal(err)
	}
	return userHome, reinsHome
}

// Prepare makes the home 0700, links what the user has (and only that),
// and is idempotent.
func TestPrepare(t *testing.T) {
	userHome, reinsHome := setup(t)
	a, _ := ByName("gemini")
	for range 2 {
		h, err := Prepare(a, reinsHome, userHome)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(reinsHome, "agents", "gemini")
		if h.Dir != dir || h.Env["GEMINI_CLI_HOME"] != dir || len(h.Env) != 1 {
			t.Fatalf("Home = %+v", h)
		}
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("state home %v %v", fi, err)
		}
		user := filepath.Join(userHome, ".gemini", "oauth_creds.json")
		if got, err := os.Readlink(filepath.Join(dir, ".gemini", "oauth_creds.json")); err != nil || got != user {
			t.Fatalf("link = %q, %v", got, err)
		}
		if len(h.Readable) != 1 || h.Readable[0] != user {
			t.Fatalf("Readable = %q", h.Readable)
		}
		if _, err := os.Lstat(filepath.Join(dir, ".gemini", "settings.json")); !os.IsNotExist(err) {
			t.Fatalf("a link to a file the user does not have: %v", err)
		}
	}
}

// What a child left in its state home is never followed out of it: a
// credential it replaced with its own file, or with a link elsewhere, is
// the user's link again; a folder it replaced with a link to a folder
// outside is not written through.
func TestPrepareHostileState(t *testing.T) {
	userHome, reinsHome := setup(t)
	a, _ := ByName("gemini")
	dir := filepath.Join(reinsHome, "agents", "gemini")
	user := filepath.Join(userHome, ".gemini", "oauth_creds.json")
	if _, err := Prepare(a, reinsHome, userHome); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, ".gemini", "oauth_creds.json")
	os.Remove(link)
	if err := os.WriteFile(link, []byte("planted"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(a, reinsHome, userHome); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.Readlink(link); got != user {
		t.Fatalf("planted file kept: link = %q", got)
	}

	outside := t.TempDir()
	if err := os.RemoveAll(filepath.Join(dir, ".gemini")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, ".gemini")); err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(a, reinsHome, userHome); err == nil {
		t.Error("Prepare wrote through a link the child planted")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("written outside the state home: %v", ents)
	}
}

// Two reins starting the same agent at once both end with the link.
func TestPrepareConcurrent(t *testing.T) {
	userHome, reinsHome := setup(t)
	a, _ := ByName("gemini")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, errs[i] = Prepare(a, reinsHome, userHome) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestTouchesUserConfig(t *testing.T) {
	home := "/home/me"
	for p, want := range map[string]bool{
		"/home/me/.codex":             true,
		"/home/me/.codex/config.toml": true,
		"/home/me/.claude.json":       true,
		"/home/me/.claude":            true,
		"/home/me":                    true,
		"/":                           true,
		"/home/me/.gemini/tmp":        true,
		"/home/me/.pi/agent":          true,
		"/home/me/.config/opencode":   true,
		"/home/me/.config":            true,
		"/home/me/.claudefoo":         false,
		"/home/me/.cache/something":   false,
		"/home/me/src/app":            false,
		"/home/other/.codex":          false,
		"/home/me/.local/share/other": false,
	} {
		if got := TouchesUserConfig(p, home); got != want {
			t.Errorf("TouchesUserConfig(%q) = %v, want %v", p, got, want)
		}
	}
}

// What `reins agents add NAME` writes is a valid agent file of that name
// (read strictly, as $REINS_HOME's files are) that Lookup takes for the
// same agent, so it runs with its state home.
func TestFilesLoad(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "agents")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, a := range Known() {
		if err := os.WriteFile(filepath.Join(dir, a.Name+".md"), []byte(a.File), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	agents, warnings, err := config.LoadAgents(config.LoadOptions{Home: home}, nil)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("LoadAgents: %v %v", err, warnings)
	}
	for _, a := range Known() {
		ag, ok := agents.Get(a.Name)
		if !ok {
			t.Errorf("%s: not loaded", a.Name)
			continue
		}
		command := ag.Command
		if command == "" && ag.Provider == config.ProviderPi {
			command = "pi"
		}
		if got, ok := Lookup(command, ag.Args); !ok || got.Name != a.Name {
			t.Errorf("%s: its file runs %q %q, which Lookup takes for %q", a.Name, command, ag.Args, got.Name)
		}
		if len(ag.Writable) > 0 {
			t.Errorf("%s: sandbox.writable %q: its state is its own home", a.Name, ag.Writable)
		}
	}
}

// TestAgentKeysAreScrubbed: every key variable an agent is let through is
// withheld from every other process — a provider's key from config's one
// table (config.Config.SecretVars), the agents' own by the scrub's name
// rule.
func TestAgentKeysAreScrubbed(t *testing.T) {
	secret := config.Default().SecretVars()
	for _, a := range Known() {
		for _, k := range a.Keys {
			if k == "" {
				t.Errorf("%s: an empty key variable", a.Name)
			}
			if !slices.Contains(secret, k) && !(sandbox.EnvPolicy{}).Withheld(k) {
				t.Errorf("%s: key %s reaches tools", a.Name, k)
			}
		}
	}
	for _, want := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"} {
		if !slices.Contains(secret, want) {
			t.Errorf("SecretVars lacks %s: %v", want, secret)
		}
	}
}
