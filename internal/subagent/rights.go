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
