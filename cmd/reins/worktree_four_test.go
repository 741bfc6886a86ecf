package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/sdkserver/sdkfake"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// Issue 34's second acceptance item, the four-children case of the first
// (testutil.FourEdits) with real child processes of a real `reins run`:
// reins children (this binary as `reins sdk`, their model the mock) and
// the ACP TypeScript SDK child, which edits the file with its own fs calls.
// The parent's tree is untouched until `reins worktree merge`; three
// merge, the fourth's conflict is reported and changes nothing; git log
// has each child's commit; `reins worktree drop` leaves no worktree.

func TestFourReinsChildrenMerge(t *testing.T) {
	url, _ := startMock(t, testutil.FourScript("helper"))
	mark := sdkfake.NewMark(t.Name())
	cwd, home := sdkWorkspace(t, mark, map[string]string{"helper": "---\nname: helper\ndescription: a reins child\nprovider: reins\n---\nYou edit files.\n"})
	status := fourRepo(t, cwd)
	cmd := reinsIn(t, cwd, home, mark, "run", "--json", "-m", "openai/test", "--base-url", url, testutil.FourPrompt)
	checkFourChildren(t, cmd, cwd, home, status)
	checkNoLeftovers(t, mark)
}

func TestFourACPChildrenMerge(t *testing.T) {
	nm := testutil.Peers(t)
	sdkPath := filepath.Join(nm, "@agentclientprotocol", "sdk", "dist", "v1", "stable", "acp.js")
	child := filepath.Join(testutil.RepoRoot(t), "internal", "subagent", "acpchild", "testdata", "child.mjs")
	agent := "---\nname: editor\ndescription: a scripted ACP child\nprovider: acp\ncommand: node\n" +
		"args: [\"" + child + "\"]\nenv:\n  ACP_SDK_PATH: \"" + sdkPath + "\"\n  ACP_SCENARIO: edit\n---\nEdit as told.\n"
	url, _ := startMock(t, testutil.FourScript("editor"))
	cwd, home := t.TempDir(), t.TempDir()
	p := filepath.Join(cwd, ".reins", "agents", "editor.md")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(agent), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.Trust(t, home, cwd)
	status := fourRepo(t, cwd)
	cmd := acpCmd(t, cwd, home, "run", "--json", "-m", "openai/test", "--base-url", url, testutil.FourPrompt)
	checkFourChildren(t, cmd, cwd, home, status)
}

// fourRepo writes testutil.FourFile into cwd, makes cwd a repository with
// everything committed and returns its `git status --porcelain`.
func fourRepo(t *testing.T, cwd string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(cwd, testutil.FourFile), []byte(testutil.FourBase), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, cwd, "init", "-q")
	gitCmd(t, cwd, "add", "-A")
	gitCmd(t, cwd, "commit", "-q", "-m", "init")
	return gitCmd(t, cwd, "status", "--porcelain")
}

// checkFourChildren runs cmd (a `reins run --json` of testutil.FourScript)
// to its end, checks the parent's four results in its session log, then
// merges with `reins worktree merge` (testutil.CheckFourMerges) and drops
// the conflicting child with `reins worktree drop`.
func checkFourChildren(t *testing.T, cmd *exec.Cmd, cwd, home, status string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reins run: %v\n%s", err, stderr.String())
	}
	var res runResult
	if err := json.Unmarshal(out, &res); err != nil || res.Output != testutil.FourDone {
		t.Fatalf("stdout %q: %v\n%s", out, err, stderr.String())
	}
	ld, err := session.Load(filepath.Join(home, "sessions", res.SessionID, session.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var contents []string
	for _, r := range testutil.Decoded[session.ToolResult](t, ld.Events, session.TypeToolResult) {
		contents = append(contents, r.Content)
	}
	ids := testutil.FourResults(t, contents)
	// reins closed: the worktrees are gone, the branches stay.
	if wl := gitCmd(t, cwd, "worktree", "list", "--porcelain"); strings.Count(wl, "worktree ") != 1 {
		t.Errorf("worktrees left after reins ended:\n%s", wl)
	}
	testutil.CheckFourMerges(t, cwd, status, ids, func(id string) (string, bool) {
		out, err := reinsCmdIn(t, cwd, home, "worktree", "merge", id).CombinedOutput()
		return string(out), err != nil
	})
	if out, err := reinsCmdIn(t, cwd, home, "worktree", "drop", ids[3]).CombinedOutput(); err != nil || !strings.Contains(string(out), "dropped "+ids[3]) {
		t.Fatalf("reins worktree drop: %v\n%s", err, out)
	}
	if br := strings.Fields(gitCmd(t, cwd, "branch", "--list", "--format=%(refname:short)", "reins/*")); len(br) != 3 {
		t.Errorf("branches after three merges and a drop: %v", br)
	}
}

// reinsCmdIn is reinsCmd in cwd.
func reinsCmdIn(t *testing.T, cwd, home string, args ...string) *exec.Cmd {
	cmd := reinsCmd(t, home, args...)
	cmd.Dir = cwd
	return cmd
}
