package cli

import (
	"cmp"
	"fmt"
	"io"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/termsafe"
)

// runEffort is the effort of a run: --effort, else the --agent's
// `effort`; "" leaves config `effort` (harness.ResolveModel applies it).
func runEffort(f *OpenFlags, ag *config.Agent) llm.Effort {
	var agentEffort llm.Effort
	if ag != nil {
		agentEffort = ag.Effort
	}
	return cmp.Or(llm.Effort(f.Effort), agentEffort)
}

// noticeModel says on w (stderr) which model a run uses and why when no -m,
// agent or config named one and the keys that are set chose it (SPEC §12):
// a user with only ANTHROPIC_API_KEY sees that Anthropic answers.
func noticeModel(w io.Writer, h *harness.Harness, spec string, m *harness.Model) {
	if spec != "" || m == nil {
		return
	}
	if _, why := h.DefaultModel(); why != "" {
		line := "reins: model " + m.Provider + "/" + m.Name
		if m.Effort != "" {
			line += ", effort " + string(m.Effort)
		}
		fmt.Fprintln(w, termsafe.EscapeLine(line+" ("+why+")"))
	}
}
