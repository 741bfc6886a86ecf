package harness

import (
	"cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/session"
)

// An allowlist that names subagent brings worktree along (and
// subagent_output): a session allowed to start isolated children can merge
// their work, which otherwise would wait on a branch for the user. Here a
// parent allowed only read, edit and subagent delegates an isolated edit
// and merges it with the worktree tool; an allowlist without subagent has
// no worktree tool.
func TestAllowlistSubagentBringsWorktree(t *testing.T) {
	script := `
replies:
  - match: ISO-ALLOW
    toolCalls: [{id: p1, name: subagent, arguments: {description: edit line two, prompt: CHILD-AL, isolation: worktree}}]
  - match: CHILD-AL
    toolCalls: [{id: e1, name: edit, arguments: {path: f.txt, old_string: "line 2\n", new_string: "line 2 by the child\n"}}]
  - {match: replaced 1 occurrence, text: edited}
  - match: "worktree: branch"
    toolCalls: [{id: m1, name: worktree, arguments: {action: merge, child: $CHILD}}]
  - {match: "merged reins/", text: merged}
  - {match: NO-SUBAGENT, text: nothing to delegate}
`
	f := newFixture(t, script, map[string]string{"f.txt": tenLines})
	dir := f.h.Cwd
	gitRepo(t, dir)
	s := f.sessionWith(t, SessionOptions{Tools: []string{"read", "edit", "subagent"}})
	if res := s.Run(context.Background(), "ISO-ALLOW"); res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn %+v", res)
	}
	if got := toolNames(t, f, "ISO-ALLOW"); !slices.Equal(got, []string{"edit", "read", "subagent", "subagent_output", "worktree"}) {
		t.Errorf("the parent's tools %v: want subagent to bring subagent_output and worktree", got)
	}
	results := toolResults(t, s)
	if len(results) != 2 || results[1].IsError || !strings.HasPrefix(results[1].Content, "merged reins/child-") {
		t.Fatalf("results %+v: want the subagent's, then the worktree merge's", results)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(got) != strings.Replace(tenLines, "line 2\n", "line 2 by the child\n", 1) {
		t.Errorf("f.txt after the model's merge: %q", got)
	}
	if wl := gitIn(t, dir, "worktree", "list", "--porcelain"); strings.Count(wl, "worktree ") != 1 {
		t.Errorf("worktrees left after the merge:\n%s", wl)
	}

	s2 := f.sessionWith(t, SessionOptions{Tools: []string{"read", "edit"}})
	if res := s2.Run(context.Background(), "NO-SUBAGENT"); res.Reason != session.ReasonCompleted {
		t.Fatalf("second session %+v", res)
	}
	if got := toolNames(t, f, "NO-SUBAGENT"); !slices.Equal(got, []string{"edit", "read"}) {
		t.Errorf("tools %v of an allowlist without subagent", got)
	}
}

// toolNames are the tools, sorted, of the parent's first model request
// that carries prompt.
func toolNames(t *testing.T, f *fixture, prompt string) []string {
	t.Helper()
	for _, r := range f.srv.Requests() {
		if !strings.Contains(r.System, "parent system prompt") || !strings.Contains(string(r.Body), prompt) {
			continue
		}
		var w wireRequest
		if err := json.Unmarshal(r.Body, &w); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tl := range w.Tools {
			got = append(got, cmp.Or(tl.Function.Name, tl.Name))
		}
		slices.Sort(got)
		return got
	}
	t.Fatalf("no request with %q", prompt)
	return nil
}
