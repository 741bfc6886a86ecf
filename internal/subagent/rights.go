package subagent

import "slices"

// ChildTools is a child's tool allowlist: the intersection of its
// parent's effective tools and its agent file's `tools`, so delegation
// never widens what a parent may do. nil stands for "every tool" on
// either side: a parent without an allowlist leaves the agent file's list
// (nil when it names none), an agent file without one inherits the
// parent's. The result keeps the agent file's order (else the parent's),
// without duplicates; it is empty, never nil, when the two share nothing.
func ChildTools(parent, agent []string) []string {
	switch {
	case parent == nil && agent == nil:
		return nil
	case agent == nil:
		return dedupe(parent, nil)
	case parent == nil:
		return dedupe(agent, nil)
	}
	return dedupe(agent, parent)
}

// dedupe returns names without duplicates, keeping only those in within
// when within is not nil.
func dedupe(names, within []string) []string {
	out := []string{}
	for _, n := range names {
		if within != nil && !slices.Contains(within, n) {
			continue
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Implied is an allowlist with the tools naming `subagent` brings along:
// subagent_output, since a cut subagent result is read on with it, and
// worktree, since a child that ran with isolation: worktree leaves its work
// on a branch that only worktree merges or drops (docs/subagents.md). Who
// may delegate may read and act on its children's work; worktree's merge
// still needs the session's workspace-write mode and its approval. names
// is not changed; nil (every tool) stays nil.
func Implied(names []string) []string {
	if !slices.Contains(names, "subagent") {
		return names
	}
	out := slices.Clip(names)
	for _, n := range []string{"subagent_output", "worktree"} {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
