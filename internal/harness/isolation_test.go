package harness

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/testutil"
	"github.com/reinsdev/reins/internal/tool"
)

// gitRepo makes dir a repository with everything in it committed.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		gitIn(t, dir, args...)
	}
}

func gitIn(t *testing.T, dir string, args ...string) string { return testutil.Git(t, dir, args...) }

var childIDRe = regexp.MustCompile(`child: (child-[0-9a-f]{8})`)

const tenLines = "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\n"

// TestIsolatedChildrenMerge is issue 34's first acceptance item: four
// parallel in-process children with isolation: worktree edit one file, two
// of them the same line (testutil.FourEdits, the table the reins and ACP
// children's tests share). The parent's working tree is untouched until
// the merges; three merge, the fourth's conflict is reported and leaves
// the tree unchanged; git log shows each child's commit; after merging or
// dropping every child no worktree is left.
func TestIsolatedChildrenMerge(t *testing.T) {
	f := newFixture(t, testutil.FourScript(""), map[string]string{testutil.FourFile: testutil.FourBase})
	dir := f.h.Cwd
	gitRepo(t, dir)
	status := gitIn(t, dir, "status", "--porcelain")
	s := f.session(t)
	res := s.Run(context.Background(), testutil.FourPrompt)
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn %+v", res)
	}
	var contents []string
	for i, r := range toolResults(t, s) {
		if r.IsError {
			t.Fatalf("result %d: %q", i, r.Content)
		}
		contents = append(contents, r.Content)
	}
	ids := testutil.FourResults(t, contents)
	for _, st := range testutil.Decoded[session.SubagentStart](t, loadEvents(t, s.Log.Path()), session.TypeSubagentStart) {
		if !strings.HasPrefix(st.Branch, "reins/child-") {
			t.Errorf("subagent/start without its branch: %+v", st)
		}
	}
	ends := testutil.Decoded[session.SubagentEnd](t, loadEvents(t, s.Log.Path()), session.TypeSubagentEnd)
	for _, e := range ends {
		if !strings.HasPrefix(e.Branch, "reins/child-") || !strings.HasPrefix(e.Worktree, "worktree: branch "+e.Branch) {
			t.Errorf("subagent/end without its branch: %+v", e)
		}
	}
	env := s.Agent.Env
	testutil.CheckFourMerges(t, dir, status, ids, func(id string) (string, bool) {
		r := s.Subagents.Worktree(context.Background(), env, "merge", id, nil)
		return r.Content, r.IsError
	})
	if d := s.Subagents.Worktree(context.Background(), env, "diff", ids[3], nil); d.IsError || !strings.Contains(d.Content, "+line 1 by D") {
		t.Errorf("diff: %s", d.Content)
	}
	if r := s.Subagents.Worktree(context.Background(), env, "drop", ids[3], nil); r.IsError {
		t.Fatalf("drop: %s", r.Content)
	}
	if wl := gitIn(t, dir, "worktree", "list", "--porcelain"); strings.Count(wl, "worktree ") != 1 {
		t.Errorf("worktrees left after merging or dropping every child:\n%s", wl)
	}
	// A dropped child is not continued in the shared workspace.
	if r := s.Subagents.Delegate(context.Background(), subagent.Params{Description: "again", Prompt: "CHILD-D again", Continue: ids[3]}); !r.IsError || !strings.Contains(r.Content, "its work was dropped") {
		t.Errorf("continuing a dropped child: %+v", r)
	}
	if r := s.Subagents.Worktree(context.Background(), env, "merge", "child-00000000", nil); !r.IsError {
		t.Errorf("merge of a child this session never had: %s", r.Content)
	}
}

// TestIsolatedChildCannotWriteParent is the third acceptance item: an
// isolated child tries the parent's workspace through the write tool and
// bash (relative and absolute paths) and fails each time, while its own
// worktree takes its writes.
func TestIsolatedChildCannotWriteParent(t *testing.T) {
	script := `
replies:
  - match: ISO-ESCAPE
    toolCalls:
      - {id: c1, name: subagent, arguments: {description: try to escape, prompt: CHILD-ESCAPE, isolation: worktree}}
  - match: CHILD-ESCAPE
    toolCalls:
      - {id: w1, name: write, arguments: {path: "../../../../f.txt", content: "pwned by write\n"}}
      - {id: w2, name: write, arguments: {path: "PARENT/g.txt", content: "pwned by write\n"}}
      - {id: b1, name: bash, arguments: {command: "echo pwned >> ../../../../f.txt; echo pwned > PARENT/h.txt; echo mine > own.txt"}}
  - match: own.txt
    text: tried
  - match: "worktree: branch"
    text: done
`
	f := newFixture(t, "replies: []", map[string]string{"f.txt": tenLines})
	dir := f.h.Cwd
	gitRepo(t, dir)
	f = refixture(t, f, strings.ReplaceAll(script, "PARENT", dir))
	s := f.session(t)
	res := s.Run(context.Background(), "ISO-ESCAPE")
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn %+v", res)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(got) != tenLines {
		t.Errorf("the child wrote the parent's f.txt: %q", got)
	}
	for _, name := range []string{"g.txt", "h.txt", "own.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("the child created %s in the parent's workspace", name)
		}
	}
	results := toolResults(t, s)
	if len(results) != 1 {
		t.Fatalf("parent results %+v", results)
	}
	id := childIDRe.FindStringSubmatch(results[0].Content)
	if id == nil || !strings.Contains(results[0].Content, "1 file changed, +1 -0") {
		t.Fatalf("result %q: want the child's own.txt as its one change", results[0].Content)
	}
	if got := gitIn(t, dir, "show", "reins/"+id[1]+":own.txt"); got != "mine\n" {
		t.Errorf("own.txt on the branch: %q", got)
	}
}

// refixture swaps f's script for script, keeping its harness and
// workspace.
func refixture(t *testing.T, f *fixture, script string) *fixture {
	t.Helper()
	g := newFixture(t, script, map[string]string{})
	g.h = f.h
	return g
}

// A continuation of an isolated child runs in its worktree again: made
// again from its branch after subagents.idleTimeout removed it (the branch
// kept), so the second run sees the first run's file and commits on the
// same branch.
func TestIsolatedContinuationAfterIdle(t *testing.T) {
	script := `
replies:
  - match: iso-cont-one
    toolCalls: [{id: p1, name: subagent, arguments: {description: first edit, prompt: CHILD-ONE, isolation: worktree}}]
  - match: CHILD-ONE
    toolCalls: [{id: w1, name: write, arguments: {path: a.txt, content: "first\n"}}]
  - {match: "wrote 6 bytes to a.txt", text: wrote a}
  - {match: "worktree: branch", text: parent one}
  - match: iso-cont-two
    toolCalls: [{id: p2, name: subagent, arguments: {description: second edit, prompt: CHILD-TWO, continue: $CHILD}}]
  - match: CHILD-TWO
    toolCalls: [{id: b1, name: bash, arguments: {command: "cat a.txt > b.txt && echo copied"}}]
  - {match: copied, text: wrote b}
  - {match: "worktree: branch", text: parent two}
`
	f := newFixture(t, script, map[string]string{"f.txt": tenLines, ".reins/config.yaml": "subagents: {idleTimeout: 1ms}\n"})
	dir := f.h.Cwd
	gitRepo(t, dir)
	s := f.session(t)
	if res := s.Run(context.Background(), "iso-cont-one"); res.Reason != session.ReasonCompleted {
		t.Fatalf("turn 1 %+v", res)
	}
	id := childLine(t, toolResults(t, s)[0].Content)
	waitFor(t, "the idle removal of the worktree", func() bool {
		return strings.Count(gitIn(t, dir, "worktree", "list", "--porcelain"), "worktree ") == 1
	})
	if res := s.Run(context.Background(), "iso-cont-two\nchild: "+id); res.Reason != session.ReasonCompleted {
		t.Fatalf("turn 2 %+v", res)
	}
	r := toolResults(t, s)[1]
	if r.IsError || !strings.Contains(r.Content, "worktree: branch reins/"+id+"; 2 files changed, +2 -0") {
		t.Fatalf("continuation result %q", r.Content)
	}
	if got := gitIn(t, dir, "show", "reins/"+id+":b.txt"); got != "first\n" {
		t.Errorf("b.txt on the branch %q: the continuation did not see its first run's work", got)
	}
	if got := gitIn(t, dir, "log", "-1", "--format=%s", "reins/"+id); got != "second edit\n" {
		t.Errorf("the continuation's commit message %q, want its description", got)
	}
	if n := strings.Count(gitIn(t, dir, "log", "--format=%an", "reins/"+id), "reins child "+id); n != 2 {
		t.Errorf("%d child commits on the branch, want 2", n)
	}
	s.Close()
	if wl := gitIn(t, dir, "worktree", "list", "--porcelain"); strings.Count(wl, "worktree ") != 1 {
		t.Errorf("worktrees left after the parent closed:\n%s", wl)
	}
	if br := gitIn(t, dir, "branch", "--list", "reins/*"); !strings.Contains(br, "reins/"+id) {
		t.Errorf("the branch did not survive the parent: %q", br)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err == nil {
		t.Error("the child's file reached the parent's tree without a merge")
	}
}

// An agent file's `isolation: worktree` isolates its children without the
// call asking, background jobs included (job_output carries the worktree
// line); an unknown isolation is refused before anything starts; merge is
// refused in a read-only session and when the session's approval says
// no, and an unknown action is an error; each leaves the tree unchanged.
func TestIsolationFromAgentFileAndToolRefusals(t *testing.T) {
	script := `
replies:
  - match: iso-agent
    toolCalls:
      - {id: p1, name: subagent, arguments: {description: by agent file, prompt: CHILD-AF, agent: writer, run_in_background: true}}
      - {id: p2, name: subagent, arguments: {description: bad isolation, prompt: CHILD-BAD, isolation: container}}
  - match: CHILD-AF
    toolCalls: [{id: w1, name: write, arguments: {path: af.txt, content: "x\n"}}]
  - {match: "wrote 2 bytes to af.txt", text: wrote af}
  - match: "finished [status: completed]"
    text: job done
  - match: "isolation"
    text: noted
`
	f := newFixture(t, script, map[string]string{
		"f.txt":                   tenLines,
		".reins/agents/writer.md": "---\nname: writer\ndescription: writes\nisolation: worktree\n---\nWRITER\n",
	})
	dir := f.h.Cwd
	gitRepo(t, dir)
	s := f.session(t)
	if res := s.Run(context.Background(), "iso-agent"); res.Reason != session.ReasonCompleted {
		t.Fatalf("turn %+v", res)
	}
	results := toolResults(t, s)
	if len(results) != 2 {
		t.Fatalf("results %+v", results)
	}
	if r := results[1]; !r.IsError || !strings.Contains(r.Content, `isolation "container" is not known`) {
		t.Errorf("unknown isolation: %+v", r)
	}
	id := childLine(t, results[0].Content)
	out := s.Subagents.JobOutput("job-1")
	if !strings.Contains(out.Content, "wrote af\nworktree: branch reins/"+id+"; 1 file changed, +1 -0; merges cleanly") {
		t.Errorf("job_output %q", out.Content)
	}
	if _, err := os.Stat(filepath.Join(dir, "af.txt")); err == nil {
		t.Fatal("the agent file's child wrote the parent's workspace")
	}
	env := *s.Agent.Env
	ro := env
	ro.Permission = tool.ReadOnly
	if r := s.Subagents.Worktree(context.Background(), &ro, "merge", id, nil); !r.IsError || !strings.Contains(r.Content, "read-only") {
		t.Errorf("merge in a read-only session: %+v", r)
	}
	no := env
	no.Approve = tool.RejectAll
	if r := s.Subagents.Worktree(context.Background(), &no, "merge", id, nil); !r.IsError || !strings.Contains(r.Content, "not approved") {
		t.Errorf("merge not approved: %+v", r)
	}
	if r := s.Subagents.Worktree(context.Background(), &env, "rebase", id, nil); !r.IsError || !strings.Contains(r.Content, "not known") {
		t.Errorf("unknown action: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "af.txt")); err == nil {
		t.Fatal("a refused merge changed the tree")
	}
	if r := s.Subagents.Worktree(context.Background(), &env, "merge", id, nil); r.IsError {
		t.Fatalf("merge: %s", r.Content)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "af.txt")); string(got) != "x\n" {
		t.Errorf("af.txt after the merge: %q", got)
	}
}
