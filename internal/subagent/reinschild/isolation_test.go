package reinschild_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

func gitIn(t *testing.T, dir string, args ...string) string { return testutil.Git(t, dir, args...) }

var childRe = regexp.MustCompile(`child: (child-[0-9a-f]{8})`)

// Issue 34 with a reins child: `isolation: worktree` runs the runtime in
// its own worktree. Its write tool and bash write there and nowhere in the
// parent's workspace (relative escapes fail); its work is committed on
// reins/<child-id> and the parent's tree is untouched until a merge, which
// the worktree tool then makes.
func TestReinsChildIsolatedWorktree(t *testing.T) {
	p := newParent(t, reinsIsoScript, map[string]string{"helper": realChildAgent})
	gitIn(t, p.cwd, "init", "-q")
	gitIn(t, p.cwd, "add", "-A")
	gitIn(t, p.cwd, "commit", "-q", "-m", "init")
	res := p.s.Run(context.Background(), "delegate-iso")
	if res.Reason != session.ReasonCompleted {
		t.Fatalf("parent turn %+v", res)
	}
	results := testutil.Decoded[session.ToolResult](t, p.events(t), session.TypeToolResult)
	if len(results) != 1 || results[0].IsError {
		t.Fatalf("parent tool results %+v", results)
	}
	m := childRe.FindStringSubmatch(results[0].Content)
	if m == nil || !strings.HasPrefix(results[0].Content, "the child wrote child.txt\nworktree: branch reins/"+m[1]+"; 1 file changed, +1 -0; merges cleanly") {
		t.Fatalf("result %q", results[0].Content)
	}
	if got, _ := os.ReadFile(filepath.Join(p.cwd, "hello.txt")); string(got) != "hi\n" {
		t.Errorf("the reins child wrote the parent's hello.txt: %q", got)
	}
	for _, name := range []string{"child.txt", "x.txt"} {
		if _, err := os.Stat(filepath.Join(p.cwd, name)); err == nil {
			t.Errorf("%s appeared in the parent's workspace before a merge", name)
		}
	}
	if r := p.s.Subagents.Worktree(context.Background(), p.s.Agent.Env, "merge", m[1], nil); r.IsError {
		t.Fatalf("merge: %s", r.Content)
	}
	if got, _ := os.ReadFile(filepath.Join(p.cwd, "child.txt")); string(got) != "from the reins child\n" {
		t.Errorf("child.txt after the merge: %q", got)
	}
}

// reinsIsoScript: the child writes its own file, then tries the parent's
// workspace (four folders up from its worktree, which lies in the parent's
// .git/reins/worktrees) through the write tool and bash.
const reinsIsoScript = `
replies:
  - match: delegate-iso
    toolCalls:
      - {id: p1, name: subagent, arguments: {description: write in isolation, agent: helper, prompt: CHILD-ISO, isolation: worktree}}
  - match: CHILD-ISO
    toolCalls:
      - {id: c1, name: write, arguments: {path: child.txt, content: "from the reins child\n"}}
      - {id: c2, name: write, arguments: {path: "../../../../hello.txt", content: "pwned\n"}}
      - {id: c3, name: bash, arguments: {command: "echo pwned >> ../../../../hello.txt; echo pwned > ../../../../x.txt; echo bashed"}}
  - match: bashed
    text: the child wrote child.txt
  - match: "worktree: branch"
    text: parent done
`
