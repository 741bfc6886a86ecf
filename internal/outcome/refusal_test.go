package outcome

import (
	"testing"

	"github.com/reinsdev/reins/internal/llm"
)

// TestRenderTextRefusals (issue 48 item 3): the refusals a child's calls
// got follow its text, whatever the stop reason, at most MaxRefusals of
// them quoted and the rest counted; the worktree line stays last.
func TestRenderTextRefusals(t *testing.T) {
	out := []llm.Block{{Type: llm.BlockText, Text: "done"}}
	for _, c := range []struct {
		name string
		r    Result
		want string
	}{
		{"none", Result{Output: out, StopReason: StopCompleted}, "done"},
		{"one", Result{Output: out, StopReason: StopCompleted, Refused: 1, Refusals: []string{"the write call was not approved"}},
			"done\n[refused in the child: the write call was not approved]"},
		{"more", Result{Output: out, StopReason: StopCompleted, Refused: 5, Refusals: []string{"a", "b", "c"}},
			"done\n[refused in the child: a]\n[refused in the child: b]\n[refused in the child: c]\n[and 2 more refused calls in the child]"},
		{"no output", Result{StopReason: StopCompleted, Refused: 1, Refusals: []string{"a"}}, "[refused in the child: a]"},
		{"error", Result{StopReason: StopError, Refused: 1, Refusals: []string{"a"}}, "Error: subagent run failed\n[refused in the child: a]"},
		{"worktree last", Result{Output: out, StopReason: StopCompleted, Refused: 1, Refusals: []string{"a"}, Worktree: "worktree: x"},
			"done\n[refused in the child: a]\nworktree: x"},
		{"note before the worktree", Result{Output: out, StopReason: StopAborted, Note: "the child's full log is on its worker", Worktree: "worktree: x"},
			"Error: subagent run was cancelled\nPartial output before the run ended:\ndone\n[the child's full log is on its worker]\nworktree: x"},
	} {
		if got, _ := RenderText(c.r); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
