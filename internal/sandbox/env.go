package sandbox

import (
	"slices"
	"strings"
)

// EnvPolicy is the environment policy of a confined process (SPEC §12
// `sandbox.env`). By default a process gets reins's environment without any
// variable that may hold a secret: a name containing one of secretWords, or
// one of Deny (the configured providers' key variables, whatever their
// names). Pass lets named variables through on purpose; Keep are the names
// the caller itself set for this process (an MCP server's configured env,
// an agent file's env, a child's own provider key), which the caller vouches
// for; Set adds variables.
type EnvPolicy struct {
	Pass []string          `json:"pass,omitempty"`
	Set  map[string]string `json:"set,omitempty"`
	Keep []string          `json:"keep,omitempty"`
	Deny []string          `json:"deny,omitempty"`
}

// secretWords: a variable whose upper-cased name contains one of these is
// taken for a secret (API keys, tokens, passwords, SSH_AUTH_SOCK).
var secretWords = []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL", "AUTH"}

// Secret reports whether a variable's name marks it as a secret.
func Secret(name string) bool {
	up := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// Withheld reports whether the scrub keeps the variable name from a
// process it does not vouch for: a secret (by its name, or one of Deny)
// not let through by Pass. It is the one secret rule: Scrub applies it,
// and so does the ${VAR} expansion of MCP servers a repository declares
// (mcpspec.ExpandServerFor), which may not name a withheld variable.
func (e EnvPolicy) Withheld(name string) bool {
	if slices.Contains(e.Pass, name) {
		return false
	}
	return Secret(name) || slices.Contains(e.Deny, name)
}

// Scrub is env without the secrets e does not let through, then e.Set.
// Every key occurs once.
func (e EnvPolicy) Scrub(env []string) []string {
	out := make([]string, 0, len(env)+len(e.Set))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := e.Set[k]; over {
			continue
		}
		if e.Withheld(k) && !slices.Contains(e.Keep, k) {
			continue
		}
		out = append(out, kv)
	}
	keys := make([]string, 0, len(e.Set))
	for k := range e.Set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		out = append(out, k+"="+e.Set[k])
	}
	return out
}
