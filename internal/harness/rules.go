package harness

import (
	"github.com/reinsdev/reins/internal/rules"
	"github.com/reinsdev/reins/internal/tool"
)

// sessionRules are the permission rules of a session made with o in
// workspace ws (internal/rules): a root session's are the config's and
// its agent file's; a child's are its agent file's under its parent's
// set, so a parent's deny holds the child and "always allow this" given
// in the terminal reaches the children too.
func (h *Harness) sessionRules(o SessionOptions, ws string) (*rules.Set, error) {
	var lists []rules.List
	if o.ruleParent == nil && h.Config != nil {
		lists = append(lists, h.Config.Permissions)
	}
	if h.Agents != nil && o.Agent != "" {
		if a, ok := h.Agents.Get(o.Agent); ok {
			lists = append(lists, a.Permissions)
		}
	}
	return rules.New(o.ruleParent, ws, tool.MatchPath, lists...)
}
