package harness

import (
	"os"
	"slices"

	"github.com/reinsdev/reins/internal/skills"
)

// skillOptions are where the skills of workspace ws are looked for: the
// user's folders, and the project's through the start's trust gate.
func (h *Harness) skillOptions(ws string) skills.Options {
	userHome := h.Getenv("HOME")
	if userHome == "" {
		userHome, _ = os.UserHomeDir()
	}
	o := skills.Options{Cwd: ws, Home: h.Home, UserHome: userHome}
	if h.gate != nil {
		o.Trusted, o.Honour = h.gate.Trusted, h.gate.Honour
	}
	return o
}

// skillsFor is the skills of workspace ws: the harness's own for its Cwd;
// a child working in a worktree of its own sees that worktree's (its
// project files judged by the repository's pins).
func (h *Harness) skillsFor(ws string) *skills.Set {
	if ws == h.Cwd || h.gate == nil {
		return h.Skills
	}
	set, _ := skills.Discover(h.skillOptions(ws))
	return set
}

// narrowSkills is a child's skills: its agent file's `skills:` within its
// parent's (nil: no narrowing on that side).
func narrowSkills(parent, agent []string) []string {
	switch {
	case parent == nil:
		return agent
	case agent == nil:
		return parent
	}
	return slices.DeleteFunc(slices.Clone(agent), func(n string) bool { return !slices.Contains(parent, n) })
}
