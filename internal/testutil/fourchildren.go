package testutil

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm/mock"
)

// Issue 34's acceptance case, one table for every child kind (in-process,
// a reins child, the ACP TypeScript SDK child): four parallel children
// with isolation: worktree each edit one line of f.txt, the first three
// different lines, the fourth the first one's line. Three merge; the
// fourth's conflict is reported and changes nothing.

// FourFile is the file the four children edit, and FourBase its content
// in the parent's repository.
const (
	FourFile   = "f.txt"
	FourBase   = "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\n"
	FourPrompt = "ISO-FOUR"           // the parent's prompt
	FourAnswer = "edited"             // each child's answer
	FourDone   = "four children done" // the parent's answer once it has the four results
)

// ChildEdit is one child's task: replace the line Old of FourFile with
// New.
type ChildEdit struct {
	Label       string // the child's prompt begins with it; the mock model answers by it
	Description string // the subagent call's description: the child's commit message
	Old, New    string
}

// FourEdits are the four children's edits, in the order the parent calls
// them; the last one conflicts with the first.
var FourEdits = []ChildEdit{
	{"CHILD-A", "edit line one", "line 1\n", "line 1 by A\n"},
	{"CHILD-B", "edit line four", "line 4\n", "line 4 by B\n"},
	{"CHILD-C", "edit line eight", "line 8\n", "line 8 by C\n"},
	{"CHILD-D", "edit line one too", "line 1\n", "line 1 by D\n"},
}

// Prompt is e's subagent prompt: its label, then the edit as one line of
// JSON ({"path","old","new"}) for a child that has no model of its own to
// read it (the ACP test agent's edit scenario reads its prompt's last
// line).
func (e ChildEdit) Prompt() string {
	b, _ := json.Marshal(map[string]string{"path": FourFile, "old": e.Old, "new": e.New})
	return e.Label + "\n" + string(b)
}

// FourMerged is FourBase with the first three edits applied.
func FourMerged() string {
	s := FourBase
	for _, e := range FourEdits[:3] {
		s = strings.Replace(s, e.Old, e.New, 1)
	}
	return s
}

// FourScript is the mock model's script (JSON, which mock.Parse reads):
// on FourPrompt the parent calls subagent four times in one message, each
// with isolation: worktree and, unless agent is "", that agent; a child
// whose model is the mock edits FourFile with the edit tool when its
// prompt's label comes; each child answers FourAnswer; the parent answers
// FourDone once the worktree lines of its children's results come.
func FourScript(agent string) string {
	var calls []mock.ToolCall
	sc := mock.Script{}
	for i, e := range FourEdits {
		args := map[string]any{"description": e.Description, "prompt": e.Prompt(), "isolation": "worktree"}
		if agent != "" {
			args["agent"] = agent
		}
		calls = append(calls, mock.ToolCall{ID: "c" + string(rune('1'+i)), Name: "subagent", Arguments: mustJSON(args)})
	}
	sc.Replies = append(sc.Replies, mock.Reply{Match: FourPrompt, ToolCalls: calls})
	for _, e := range FourEdits {
		sc.Replies = append(sc.Replies, mock.Reply{Match: e.Label, ToolCalls: []mock.ToolCall{{
			Name: "edit", Arguments: mustJSON(map[string]string{"path": FourFile, "old_string": e.Old, "new_string": e.New}),
		}}})
	}
	sc.Replies = append(sc.Replies,
		mock.Reply{Match: "replaced 1 occurrence", Repeat: true, Text: FourAnswer},
		mock.Reply{Match: "worktree: branch", Text: FourDone})
	return string(mustJSON(sc))
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// FourResults checks the parent's four subagent results, in call order:
// each is the child's answer, then its worktree line (its branch, one
// line changed, merges cleanly), then its child line. It returns the
// children's ids in FourEdits's order.
func FourResults(t testing.TB, results []string) []string {
	t.Helper()
	if len(results) != len(FourEdits) {
		t.Fatalf("%d subagent results, want %d:\n%s", len(results), len(FourEdits), strings.Join(results, "\n---\n"))
	}
	var ids []string
	for i, r := range results {
		at := strings.LastIndex(r, "\nchild: ")
		if at < 0 {
			t.Fatalf("result %d has no child line: %q", i, r)
		}
		id := r[at+len("\nchild: "):]
		want := FourAnswer + "\nworktree: branch reins/" + id + "; 1 file changed, +1 -1; merges cleanly into the working tree"
		if got := NoChildLine(r); got != want {
			t.Errorf("result %d:\n%s\nwant\n%s", i, got, want)
		}
		ids = append(ids, id)
	}
	return ids
}

// CheckFourMerges is the rest of the case, in dir's repository after the
// four children (ids in FourEdits's order) settled: FourFile and `git
// status` (status is its output before the run) are untouched; merging
// the first three brings their lines; the fourth's merge fails with its
// conflict and leaves the file as it was; `git log --all` has each
// child's commit (author "reins child <id>", its description). merge
// merges one child the way the test's parent does (the worktree tool,
// `reins worktree merge`) and returns its text and whether it failed.
func CheckFourMerges(t testing.TB, dir, status string, ids []string, merge func(id string) (string, bool)) {
	t.Helper()
	file := filepath.Join(dir, FourFile)
	if got, _ := os.ReadFile(file); string(got) != FourBase {
		t.Fatalf("the parent's %s changed before any merge: %q", FourFile, got)
	}
	if got := Git(t, dir, "status", "--porcelain"); got != status {
		t.Fatalf("the parent's git status changed before any merge:\n%s", got)
	}
	for _, id := range ids[:3] {
		if out, failed := merge(id); failed || !strings.Contains(out, "merged reins/"+id) {
			t.Fatalf("merge %s: %s", id, out)
		}
	}
	merged := FourMerged()
	if got, _ := os.ReadFile(file); string(got) != merged {
		t.Fatalf("after three merges %s is %q, want %q", FourFile, got, merged)
	}
	out, failed := merge(ids[3])
	if !failed || !strings.Contains(out, "does not merge cleanly") || !strings.Contains(out, "CONFLICT (content): Merge conflict in "+FourFile) {
		t.Fatalf("the fourth merge (failed %v): %s", failed, out)
	}
	if got, _ := os.ReadFile(file); string(got) != merged {
		t.Fatalf("the conflicted merge changed %s: %q", FourFile, got)
	}
	log := Git(t, dir, "log", "--all", "--format=%an|%s")
	for i, e := range FourEdits {
		if !strings.Contains(log, "reins child "+ids[i]+"|"+e.Description+"\n") {
			t.Errorf("git log has no commit of %s (%s):\n%s", ids[i], e.Description, log)
		}
	}
}
