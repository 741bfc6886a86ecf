package view

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/session"
)

// An isolated child (isolation: worktree, docs/subagents.md) carries its
// branch on subagent/start and subagent/end, and its result's worktree
// line on subagent/end; the view shows the branch on the child's row, as
// the interactive terminal does, and the worktree line in its details.

const (
	isoBranch   = "reins/child-1a2b3c4d"
	isoWorktree = "worktree: branch " + isoBranch + "; 1 file changed, +1 -1; merges cleanly into the working tree"
)

// isolated writes the session "iso": an isolated in-process child that
// settled, an isolated ACP child (no reins session) that settled, and a
// child without isolation.
func (f *fixture) isolated() {
	t := f.t
	l := f.create("iso", "")
	add(t, l, session.TypeTurnStart, session.TurnStart{Turn: 0})
	add(t, l, session.TypeUserMessage, session.UserMessage{Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "edit in parallel"}}}})
	add(t, l, session.TypeStepStart, session.StepStart{})
	add(t, l, session.TypeSubagentStart, session.SubagentStart{RunID: "run-i", ChildSession: "child-iso", Agent: "editor", Provider: "inprocess", Label: "edit line one", Branch: isoBranch})
	f.child("child-iso", "iso", session.ReasonCompleted, "edited")
	add(t, l, session.TypeSubagentEnd, session.SubagentEnd{RunID: "run-i", StopReason: string(session.ReasonCompleted), LastAssistantMessage: text("edited"), DurationMs: 2000,
		Branch: isoBranch, Worktree: isoWorktree})
	add(t, l, session.TypeSubagentStart, session.SubagentStart{RunID: "run-a", Agent: "writer", Provider: "acp", Label: "edit line four", Branch: "reins/child-5e6f7a8b"})
	add(t, l, session.TypeSubagentEnd, session.SubagentEnd{RunID: "run-a", StopReason: string(session.ReasonCompleted), LastAssistantMessage: text("edited"), DurationMs: 1000,
		Branch: "reins/child-5e6f7a8b", Worktree: "worktree: branch reins/child-5e6f7a8b; 1 file changed, +1 -1; merges cleanly into the working tree"})
	add(t, l, session.TypeSubagentStart, session.SubagentStart{RunID: "run-s", ChildSession: "child-shared", Agent: "reader", Provider: "inprocess", Label: "read"})
	f.child("child-shared", "iso", session.ReasonCompleted, "read it")
	add(t, l, session.TypeSubagentEnd, session.SubagentEnd{RunID: "run-s", StopReason: string(session.ReasonCompleted), LastAssistantMessage: text("read it"), DurationMs: 1000})
	add(t, l, session.TypeStepEnd, session.StepEnd{})
	add(t, l, session.TypeTurnEnd, session.TurnEnd{Reason: session.ReasonCompleted})
	closeLog(t, l)
}

func TestTreeIsolatedBranch(t *testing.T) {
	f := newFixture(t)
	f.isolated()
	ts := serve(t, f.root, Options{})
	tree := getJSON[Tree](t, ts.URL+"/api/sessions/iso?token="+testToken)
	for _, tt := range []struct{ key, branch, worktree string }{
		{"child-iso", isoBranch, isoWorktree},
		{"iso/run-a", "reins/child-5e6f7a8b", "worktree: branch reins/child-5e6f7a8b; 1 file changed, +1 -1; merges cleanly into the working tree"},
		{"child-shared", "", ""},
	} {
		n := nodeByKey(tree.Root, tt.key)
		if n == nil {
			t.Fatalf("no node %s", tt.key)
		}
		if n.Branch != tt.branch || n.Worktree != tt.worktree {
			t.Errorf("%s: branch %q worktree %q, want %q %q", tt.key, n.Branch, n.Worktree, tt.branch, tt.worktree)
		}
	}
}

// TestBrowserIsolatedBranch: the row of an isolated child names its branch
// as the terminal's row does ([reins/child-…]); its details show the
// worktree line; a child without isolation has no branch mark.
func TestBrowserIsolatedBranch(t *testing.T) {
	f := newFixture(t)
	f.isolated()
	ts := serve(t, f.root, Options{})
	ctx := newBrowser(t)
	within(t, ctx, 30*time.Second, "opening the page",
		chromedp.Navigate(ts.URL+"/?token="+testToken+"#s=iso"),
		chromedp.WaitVisible(css(`tr[data-key="child-shared"]`)))
	rs := rows(t, ctx)
	if n := rs["child-iso"].Name; !strings.Contains(n, "editor: edit line one") || !strings.Contains(n, "["+isoBranch+"]") {
		t.Errorf("isolated child's row: %q", n)
	}
	if n := rs["iso/run-a"].Name; !strings.Contains(n, "[reins/child-5e6f7a8b]") {
		t.Errorf("isolated ACP child's row: %q", n)
	}
	if n := rs["child-shared"].Name; strings.Contains(n, "reins/") {
		t.Errorf("a child without isolation shows a branch: %q", n)
	}
	within(t, ctx, 30*time.Second, "selecting the isolated child",
		chromedp.Evaluate[chromedp.Void](`location.hash = 's=iso&n=child-iso'`),
		chromedp.WaitVisible(css(`.detail .conv .k-assistant`)))
	info := value(t, ctx, 10*time.Second, "reading the details", chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll('.detail .info div')).map(d => d.textContent)`))
	want := "worktree " + strings.TrimPrefix(isoWorktree, "worktree: ")
	var found bool
	for _, line := range info {
		found = found || line == want
	}
	if !found {
		t.Errorf("details %q lack %q", info, want)
	}
	checkNoStray(t, ctx)
	screenshot(t, ctx, "isolated-branch.png")
}
