package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/spf13/cobra"
)

// newSkillsCmd is `reins skills`: the Agent Skills a session in the
// workspace sees (docs/skills.md), with where each came from, and one
// warning line for each skill that was skipped.
func newSkillsCmd(s *streams) *cobra.Command {
	return listingCmd(s, "skills", "List the Agent Skills found, with where each came from", func(h *harness.Harness) error {
		tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tORIGIN\tSOURCE\tDESCRIPTION")
		for _, sk := range h.Skills.List() {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cell(sk.Name), cell(string(sk.Origin)), cell(sk.Dir), cell(termsafe.Clip(sk.Description, 60)))
		}
		tw.Flush()
		if h.Skills.Len() == 0 {
			fmt.Fprintln(s.err, "no skills (folders with SKILL.md in $REINS_HOME/skills, ~/.claude/skills, ~/.agents/skills, or a trusted project's .reins/skills, .claude/skills, .agents/skills)")
		}
		for _, w := range h.SkillWarnings {
			fmt.Fprintln(s.err, "warning: "+termsafe.Escape(w.String()))
		}
		return nil
	})
}
