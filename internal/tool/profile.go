package tool

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reinsdev/reins/internal/lazy"
)

// Profile is a tool profile: which shapes of the built-in file tools a
// model is offered, after the tools its maker trained it on (issue 35).
// Tools that are not built-ins (MCP tools, subagent, jobs) are untouched.
type Profile string

const (
	// ProfileDefault is every built-in but apply_patch: the edit, multi_edit
	// and write shapes most models handle.
	ProfileDefault Profile = ""
	// ProfileCodex is for OpenAI's models, trained on Codex's apply_patch:
	// apply_patch instead of edit, multi_edit and write.
	ProfileCodex Profile = "codex"
	// ProfileClaude is for Anthropic's models, trained on Claude Code's
	// Read/Write/Edit/MultiEdit/Grep/Glob/LS/Bash: those shapes, no
	// apply_patch.
	ProfileClaude Profile = "claude"
	// ProfileMinimal is read, write, edit and bash only: the fewest tool
	// definitions, for small models and small contexts.
	ProfileMinimal Profile = "minimal"
)

// profileTools are the built-ins each profile keeps.
var profileTools = lazy.Value[map[Profile][]string]{New: func() map[Profile][]string {
	return map[Profile][]string{
		ProfileDefault: {"read", "write", "edit", "multi_edit", "bash", "bash_output", "bash_kill", "grep", "glob", "ls"},
		ProfileCodex:   {"read", "apply_patch", "bash", "bash_output", "bash_kill", "grep", "glob", "ls"},
		ProfileClaude:  {"read", "write", "edit", "multi_edit", "bash", "bash_output", "bash_kill", "grep", "glob", "ls"},
		ProfileMinimal: {"read", "write", "edit", "bash"},
	}
}}

// ParseProfile validates a profile name (agent file `tools: profile NAME`).
func ParseProfile(s string) (Profile, error) {
	p := Profile(strings.ToLower(strings.TrimSpace(s)))
	if _, ok := profileTools.Get()[p]; !ok || p == ProfileDefault {
		return "", fmt.Errorf("unknown tool profile %q (want codex, claude or minimal)", s)
	}
	return p, nil
}

// ProfileFor is the profile of a model: the one an agent file set
// (explicit, when not empty), else the one its maker trained it on,
// judged from the provider and model name. It is the one place the choice
// is made; when the model catalogue (issue 31) records a profile per model
// this is the function to point at it.
func ProfileFor(explicit Profile, provider, model string) Profile {
	if explicit != ProfileDefault {
		return explicit
	}
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:] // openrouter-style "openai/gpt-5"
	}
	switch p := strings.ToLower(provider); {
	case p == "anthropic" || strings.HasPrefix(m, "claude"):
		return ProfileClaude
	case p == "openai" && (strings.HasPrefix(m, "gpt-") || strings.HasPrefix(m, "codex") ||
		strings.HasPrefix(m, "o1") || strings.HasPrefix(m, "o3") || strings.HasPrefix(m, "o4")),
		strings.HasPrefix(m, "gpt-5") || strings.HasPrefix(m, "codex"):
		// OpenAI's own coding models (by name): a local server reached as
		// openai/<anything else> keeps the default shapes.
		return ProfileCodex
	}
	return ProfileDefault
}

// Tools are the built-in tool names p keeps.
func (p Profile) Tools() []string { return slices.Clone(profileTools.Get()[p]) }

// Filter returns r without the built-ins p does not offer; every other tool
// stays.
func (p Profile) Filter(r *Registry) *Registry {
	keep := profileTools.Get()[p]
	if keep == nil {
		keep = profileTools.Get()[ProfileDefault]
	}
	builtin := map[string]bool{}
	for _, t := range Builtins() {
		builtin[t.Spec().Name] = true
	}
	out := NewRegistry()
	for _, n := range r.Names() {
		if builtin[n] && !slices.Contains(keep, n) {
			continue
		}
		t, _ := r.Get(n)
		out.Add(t)
	}
	return out
}
