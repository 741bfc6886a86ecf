package subagent

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinsdev/reins/internal/agenthome"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/sandbox"
)

// AgentHome gives a known agent (internal/agenthome) its private state
// home: it prepares the home, adds it to pol's State and the user's linked
// credential files to pol's Readable, and returns env (the agent file's,
// with the agent's state variables added) for the child. base is the
// environment the child inherits, where $REINS_HOME and the user's HOME
// are read. An unknown agent, or one whose agent file sets HOME or the
// agent's own variable, keeps env as is. The error is for the host log
// (a path or a cause): the child then starts without the links.
func (r Request) AgentHome(base []string, pol *sandbox.Policy, env map[string]string) (map[string]string, error) {
	if r.Agent == nil {
		return env, nil
	}
	command := r.Agent.Command
	if command == "" && r.Agent.Provider == config.ProviderPi {
		command = "pi" // the pi provider's default
	}
	a, ok := agenthome.Lookup(command, r.Agent.Args)
	if !ok || a.Overridden(env) {
		return env, nil
	}
	getenv := func(k string) string {
		for _, kv := range slices.Backward(base) {
			if n, v, _ := strings.Cut(kv, "="); n == k {
				return v
			}
		}
		return ""
	}
	// Both homes come from the environment the child inherits: without
	// HOME and REINS_HOME there (a test's bare environment), no state
	// home is made anywhere.
	userHome, reinsHome := getenv("HOME"), getenv("REINS_HOME")
	if reinsHome == "" && userHome != "" {
		reinsHome = filepath.Join(userHome, ".reins") // config.Home's default
	}
	if reinsHome == "" {
		return env, nil
	}
	h, err := agenthome.Prepare(a, reinsHome, userHome)
	if h.Dir == "" {
		return env, err
	}
	out := maps.Clone(env)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, h.Env)
	pol.State = append(slices.Clip(pol.State), h.Dir)
	pol.Readable = append(slices.Clip(pol.Readable), h.Readable...)
	for k := range h.Env {
		pol.Env.Keep = append(slices.Clip(pol.Env.Keep), k)
	}
	// Its own API key variables reach it, as a child's model key does.
	pol.Env.Keep = append(slices.Clip(pol.Env.Keep), a.Keys...)
	return out, err
}

// childWritable is an agent file's `sandbox.writable` without the paths
// that are, hold or lie in a known agent's own config in the user's home
// (~/.claude, ~/.claude.json, ~/.codex, ~/.gemini, …): a child that could
// write there could plant hooks or MCP servers that later run on the host
// unconfined. Its state lives in its own home instead (AgentHome).
func childWritable(paths []string, userHome string) (keep, dropped []string) {
	for _, p := range paths {
		if agenthome.TouchesUserConfig(p, userHome) {
			dropped = append(dropped, p)
			continue
		}
		keep = append(keep, p)
	}
	return keep, dropped
}
