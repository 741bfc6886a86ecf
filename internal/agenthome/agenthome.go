// Package agenthome gives each known coding agent run as a child (Claude
// Code's ACP adapter, codex-acp, Gemini CLI, opencode, qwen-code, cline,
// pi) a private state home under $REINS_HOME/agents/NAME/.
//
// Why: an agent writes its state (sessions, logs, caches, its config) into
// its home folder, ~/.codex or ~/.gemini. Under the sandbox that folder is
// read-only, so the agent failed at initialize; making it writable would
// let a child plant hooks or MCP servers in the user's own config that run
// later on the host, unconfined. So the child gets a home of its own that
// it may write, reached through the agent's own variable (CODEX_HOME,
// CLAUDE_CONFIG_DIR, …) or else HOME, and the user's credential files for
// that agent appear in it as symbolic links to the user's files, which
// the sandbox leaves read-only. The table below is the one place that
// says which agents are known and what each needs.
package agenthome

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/lazy"
)

// Agent is one known agent: how it is recognised and where it keeps
// its state.
type Agent struct {
	// Name is the state home's folder name under $REINS_HOME/agents and
	// the name `reins agents add` takes.
	Name string
	// Commands are the executable names (the basename of an agent file's
	// command) and the npm packages (after npx's flags) that run it.
	Commands []string
	// Vars are set to the state home (sub-paths of it for XDG ones, see
	// env). Empty: HOME is.
	Vars []string
	// Links are the user's files, relative to the user's home, that
	// appear read-only in the state home, each at its path relative to
	// the state home.
	Links []Link
	// UserConfig are the user's own folders and files of this agent,
	// relative to the user's home: never writable by a child.
	UserConfig []string
	// Keys are the variables holding the agent's own API keys: the
	// sandbox lets them through to it (its provider's key, as a child's
	// model key is).
	Keys []string
	// File is the agent file `reins agents add NAME` writes.
	File string
}

// providerKey is a model provider's key variable from config's one table
// (config.ProviderDefaults), which the sandbox's scrub reads too
// (config.Config.SecretVars): an agent that reads its provider's key
// reads the variable reins knows for it, spelled in one place.
func providerKey(provider string) string {
	_, env, _, _ := config.ProviderDefaults(provider)
	return env
}

// Link is one file of the user's shown inside the state home.
type Link struct{ User, State string }

// Known is the table of known agents (built on first use: it names
// config's key variables, and reins builds no tables at start-up).
func Known() []Agent { return known.Get() }

var known = lazy.Value[[]Agent]{New: func() []Agent {
	return []Agent{

		{
			Name: "claude",
			Keys: []string{providerKey("anthropic"), "CLAUDE_CODE_OAUTH_TOKEN"},
			File: `---
name: claude
description: Claude Code, for multi-file changes
provider: acp
command: claude-agent-acp   # npm i -g @zed-industries/claude-agent-acp
permission: allow           # its permission requests: allowed within reins's permission mode
timeout: 20m
---
Work only inside this repository and end with a short summary of what you changed.
`,
			Commands:   []string{"claude-agent-acp", "claude-code-acp", "@zed-industries/claude-agent-acp", "@zed-industries/claude-code-acp", "@agentclientprotocol/claude-agent-acp"},
			Vars:       []string{"CLAUDE_CONFIG_DIR"},
			Links:      []Link{{User: ".claude/.credentials.json", State: ".credentials.json"}},
			UserConfig: []string{".claude", ".claude.json"},
		},
		{
			Name: "codex",
			Keys: []string{providerKey("openai"), "CODEX_API_KEY"},
			File: `---
name: codex
description: Codex, for focused fixes with tests
provider: acp
command: codex-acp          # npm i -g @zed-industries/codex-acp
# reins's sandbox confines it; untrusted makes it ask before its commands
args: [-c, sandbox_mode=danger-full-access, -c, approval_policy=untrusted]
permission: allow
timeout: 20m
---
Work only inside this repository and end with a short summary of what you changed.
`,
			Commands:   []string{"codex-acp", "@zed-industries/codex-acp"},
			Vars:       []string{"CODEX_HOME"},
			Links:      []Link{{User: ".codex/auth.json", State: "auth.json"}},
			UserConfig: []string{".codex"},
		},
		{
			// Gemini CLI's GEMINI_CLI_HOME stands for the home folder: its
			// state is GEMINI_CLI_HOME/.gemini. settings.json names the
			// signed-in account's auth type, without which it cannot start
			// in ACP mode.
			Name: "gemini",
			Keys: []string{providerKey("gemini"), "GOOGLE_API_KEY"},
			File: `---
name: gemini
description: Gemini CLI, for reading large code bases
provider: acp
command: gemini             # npm i -g @google/gemini-cli
args: [--acp]
permission: allow
timeout: 20m
---
Work only inside this repository and end with a short summary of what you changed.
`,
			Commands: []string{"gemini", "@google/gemini-cli"},
			Vars:     []string{"GEMINI_CLI_HOME"},
			Links: []Link{
				{User: ".gemini/oauth_creds.json", State: ".gemini/oauth_creds.json"},
				{User: ".gemini/google_accounts.json", State: ".gemini/google_accounts.json"},
				{User: ".gemini/settings.json", State: ".gemini/settings.json"},
			},
			UserConfig: []string{".gemini"},
		},
		{
			Name: "opencode",
			File: `---
name: opencode
description: opencode
provider: acp
command: opencode           # npm i -g opencode-ai
args: [acp]
permission: allow
timeout: 20m
---
Work only inside this repository and end with a short summary of what you changed.
`,
			Commands: []string{"opencode", "opencode-ai"},
			Vars:     []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"},
			Links: []Link{
				{User: ".local/share/opencode/auth.json", State: ".local/share/opencode/auth.json"},
				{User: ".config/opencode/opencode.json", State: ".config/opencode/opencode.json"},
			},
			UserConfig: []string{".config/opencode", ".local/share/opencode", ".local/state/opencode"},
		},
		{
			Name: "qwen",
			Keys: []string{providerKey("openai"), "DASHSCOPE_API_KEY"},
			File: `---
name: qwen
description: qwen-code
provider: acp
command: qwen               # npm i -g @qwen-code/qwen-code (Node 22 or later)
args: [--acp, --approval-mode, default]
permission: allow
timeout: 20m
---
Work only inside this repository and end with a short summary of what you changed.
`,
			Commands: []string{"qwen", "@qwen-code/qwen-code"},
			Links: []Link{
				{User: ".qwen/oauth_creds.json", State: ".qwen/oauth_creds.json"},
				{User: ".qwen/settings.json", State: ".qwen/settings.json"},
			},
			UserConfig: []string{".qwen"},
		},
		{
			Name: "cline",
			File: `---
name: cline
description: cline
provider: acp
command: cline              # npm i -g cline; its provider set once by "cline auth"
args: [--acp]
permission: allow
timeout: 20m
---
Work only inside this repository and end with a short summary of what you changed.
`,
			Commands:   []string{"cline"},
			Vars:       []string{"CLINE_DIR"},
			Links:      []Link{{User: ".cline/data/settings/providers.json", State: "data/settings/providers.json"}},
			UserConfig: []string{".cline"},
		},
		{
			Name: "pi",
			File: `---
name: pi
description: pi, the coding agent
provider: pi                # runs pi (npm i -g @mariozechner/pi-coding-agent) through reins wrap
timeout: 20m
---
Work only inside this repository and end with a short summary of what you changed.
`,
			Commands:   []string{"pi", "@mariozechner/pi-coding-agent"},
			Vars:       []string{"PI_CODING_AGENT_DIR"},
			Links:      []Link{{User: ".pi/agent/auth.json", State: "auth.json"}},
			UserConfig: []string{".pi"},
		},
	}
}}

// Lookup finds the known agent that command with args runs: by the
// command's basename, or for npx (and pnpm dlx, bunx) by the first
// argument that is not a flag, its version (@1.2.3) cut.
func Lookup(command string, args []string) (Agent, bool) {
	name := filepath.Base(command)
	switch name {
	case "npx", "bunx", "pnpx":
		name = packageArg(args)
	case "pnpm":
		if len(args) > 0 && args[0] == "dlx" {
			name = packageArg(args[1:])
		}
	}
	for _, a := range Known() {
		for _, c := range a.Commands {
			if c == name {
				return a, true
			}
		}
	}
	return Agent{}, false
}

// ByName finds a known agent by its Name.
func ByName(name string) (Agent, bool) {
	for _, a := range Known() {
		if a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}

// packageArg is the npm package an npx command line runs, without its
// version.
func packageArg(args []string) string {
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		at := strings.LastIndex(a, "@")
		if at > 0 {
			a = a[:at]
		}
		return a
	}
	return ""
}

// Home is a prepared state home.
type Home struct {
	// Dir is the state home: writable to the child in every confined
	// mode (sandbox.Policy.State).
	Dir string
	// Env is what the child's environment gets.
	Env map[string]string
	// Readable are the user's files linked into Dir (sandbox.Policy.Readable).
	Readable []string
}

// env is the environment that points the agent at dir.
func (a Agent) env(dir string) map[string]string {
	vars := a.Vars
	if len(vars) == 0 {
		vars = []string{"HOME"}
	}
	out := map[string]string{}
	for _, v := range vars {
		switch v {
		case "XDG_CONFIG_HOME":
			out[v] = filepath.Join(dir, ".config")
		case "XDG_DATA_HOME":
			out[v] = filepath.Join(dir, ".local", "share")
		case "XDG_STATE_HOME":
			out[v] = filepath.Join(dir, ".local", "state")
		case "XDG_CACHE_HOME":
			out[v] = filepath.Join(dir, ".cache")
		default:
			out[v] = dir
		}
	}
	return out
}

// Overridden reports whether an agent file's env already sets one of the
// variables that place a's state (or HOME): then the file chose where the
// agent keeps it, and reins leaves it there.
func (a Agent) Overridden(env map[string]string) bool {
	if _, ok := env["HOME"]; ok {
		return true
	}
	for k := range a.env("x") {
		if _, ok := env[k]; ok {
			return true
		}
	}
	return false
}

// Prepare makes a's state home under reinsHome (0700, when missing) and
// links the user's files of userHome into it. It is safe to run by two
// reins at once and against a state home a child wrote before: a link is
// put in place by rename, and a folder the child replaced with a symbolic
// link is never followed (os.Root).
func Prepare(a Agent, reinsHome, userHome string) (Home, error) {
	if reinsHome == "" || !filepath.IsAbs(reinsHome) {
		return Home{}, fmt.Errorf("agent state home: $REINS_HOME %q is not an absolute path", reinsHome)
	}
	dir := filepath.Join(reinsHome, "agents", a.Name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Home{}, fmt.Errorf("agent state home: %w", err)
	}
	h := Home{Dir: dir, Env: a.env(dir)}
	if userHome == "" || !filepath.IsAbs(userHome) {
		return h, nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return Home{}, fmt.Errorf("agent state home: %w", err)
	}
	defer root.Close()
	var errs []error
	for _, l := range a.Links {
		user := filepath.Join(userHome, l.User)
		if fi, err := os.Stat(user); err != nil || !fi.Mode().IsRegular() {
			continue // not signed in: nothing to show; what the child keeps stays
		}
		if err := link(root, user, l.State); err != nil {
			errs = append(errs, fmt.Errorf("agent state home %s: %s: %w", dir, l.State, err))
			continue
		}
		h.Readable = append(h.Readable, user)
	}
	return h, errors.Join(errs...)
}

// linkSeq numbers link's temporary names within this process.
var linkSeq atomic.Uint64

// link makes name, inside root, a symbolic link to target. A link that
// already points there is left; anything else at name (a file the agent
// wrote, a link elsewhere) is replaced: the user's file is the one source
// of the credential.
func link(root *os.Root, target, name string) error {
	if d := filepath.Dir(name); d != "." {
		if err := root.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	if got, err := root.Readlink(name); err == nil && got == target {
		return nil
	}
	// A name of this call's own: two goroutines of one reins preparing the
	// same agent at once shared the pid-only name, and one renamed the
	// other's link away (TestPrepareConcurrent, a CI failure).
	tmp := fmt.Sprintf("%s.reins-%d-%d", name, os.Getpid(), linkSeq.Add(1))
	_ = root.Remove(tmp)
	if err := root.Symlink(target, tmp); err != nil {
		return err
	}
	if err := root.Rename(tmp, name); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	return nil
}

// UserConfig is every known agent's own config under userHome: paths a
// child must never be granted write access to.
func UserConfig(userHome string) []string {
	var out []string
	for _, a := range Known() {
		for _, c := range a.UserConfig {
			out = append(out, filepath.Join(userHome, c))
		}
	}
	return out
}

// TouchesUserConfig reports whether writable path p (absolute, cleaned)
// is one of the agents' user config paths under userHome, inside one, or
// a folder holding one.
func TouchesUserConfig(p, userHome string) bool {
	if userHome == "" {
		return false
	}
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	for _, c := range UserConfig(userHome) {
		if r, err := filepath.EvalSymlinks(c); err == nil {
			c = r
		}
		if within(c, p) || within(p, c) {
			return true
		}
	}
	return false
}

func within(root, p string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+string(filepath.Separator))
}
