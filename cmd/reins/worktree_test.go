package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/testutil"
)

func gitCmd(t *testing.T, dir string, args ...string) string { return testutil.Git(t, dir, args...) }

// TestWorktreeSurvivesSIGKILL is issue 34's second acceptance item's
// crash half: reins is killed (SIGKILL) while an isolated child has written
// into its worktree and waits on its model. The main checkout is
// untouched, `reins worktree list` shows the worktree with its uncommitted
// work, and `reins worktree merge` recovers it into the working tree.
func TestWorktreeSurvivesSIGKILL(t *testing.T) {
	sc, err := mock.Parse([]byte(`
replies:
  - match: ISO-KILL
    toolCalls:
      - {id: c1, name: subagent, arguments: {description: write then hang, prompt: CHILD-K, isolation: worktree}}
  - match: CHILD-K
    toolCalls:
      - {id: b1, name: bash, arguments: {command: "echo recovered > work.txt && echo wrote-it"}}
  - match: wrote-it
    fault: stall
`))
	if err != nil {
		t.Fatal(err)
	}
	url, _, stop := mock.StartTest(sc)
	t.Cleanup(stop)
	home := t.TempDir()
	cmd := reinsCmd(t, home, "run", "--base-url", url, "-m", "openai/m", "ISO-KILL")
	dir := cmd.Dir
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("parent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, dir, "init", "-q")
	gitCmd(t, dir, "add", "-A")
	gitCmd(t, dir, "commit", "-q", "-m", "init")
	status := gitCmd(t, dir, "status", "--porcelain")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The child's write is the event to kill on; the bound is generous
	// and only a failure waits for it.
	deadline := time.Now().Add(2 * time.Minute)
	var work []string
	for len(work) == 0 {
		work, _ = filepath.Glob(filepath.Join(dir, ".git", "reins", "worktrees", "*", "work.txt"))
		select {
		case err := <-done:
			t.Fatalf("reins ended before the child wrote: %v\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the child never wrote work.txt\n%s", stderr.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	if got := gitCmd(t, dir, "status", "--porcelain"); got != status {
		t.Errorf("the main checkout changed:\n%s", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(got) != "parent\n" {
		t.Errorf("f.txt %q", got)
	}
	id := filepath.Base(filepath.Dir(work[0]))
	if !strings.Contains(gitCmd(t, dir, "worktree", "list"), id) {
		t.Errorf("git worktree list does not show %s", id)
	}
	list := reinsCmd(t, home, "worktree", "list", "--cwd", dir)
	out, err := list.CombinedOutput()
	if err != nil || !strings.Contains(string(out), id) || !strings.Contains(string(out), "(uncommitted changes)") {
		t.Fatalf("reins worktree list: %v\n%s", err, out)
	}
	merge := reinsCmd(t, home, "worktree", "merge", "--cwd", dir, id[:10])
	out, err = merge.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "merged reins/"+id) {
		t.Fatalf("reins worktree merge: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "work.txt")); string(got) != "recovered\n" {
		t.Errorf("work.txt after the merge: %q", got)
	}
	if wl := gitCmd(t, dir, "worktree", "list", "--porcelain"); strings.Count(wl, "worktree ") != 1 {
		t.Errorf("worktrees left after the merge:\n%s", wl)
	}
	drop := reinsCmd(t, home, "worktree", "drop", "--cwd", dir, id)
	if out, err := drop.CombinedOutput(); err != nil || !strings.Contains(string(out), "dropped "+id) {
		t.Fatalf("reins worktree drop: %v\n%s", err, out)
	}
	if br := gitCmd(t, dir, "branch", "--list", "reins/*"); br != "" {
		t.Errorf("branches left after drop: %s", br)
	}
}

// Outside a repository, isolation is refused before the child starts,
// with a clear error, and nothing is written in the folder.
func TestIsolationRefusedOutsideRepo(t *testing.T) {
	sc, err := mock.Parse([]byte(`
replies:
  - match: ISO-NOREPO
    toolCalls:
      - {id: c1, name: subagent, arguments: {description: write, prompt: CHILD-N, isolation: worktree}}
  - match: CHILD-N
    toolCalls: [{id: w1, name: write, arguments: {path: child.txt, content: "x\n"}}]
  - match: isolation
    text: refused as expected
`))
	if err != nil {
		t.Fatal(err)
	}
	url, srv, stop := mock.StartTest(sc)
	t.Cleanup(stop)
	cmd := reinsCmd(t, t.TempDir(), "run", "--base-url", url, "-m", "openai/m", "ISO-NOREPO")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != "refused as expected" {
		t.Fatalf("reins run: %v %q\n%s", err, out, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(cmd.Dir, "child.txt")); err == nil {
		t.Error("the child ran in the shared workspace")
	}
	var saw bool
	for _, r := range srv.Requests() {
		saw = saw || strings.Contains(string(r.Body), "needs a git repository")
	}
	if !saw {
		t.Error("the parent's model was not told isolation needs a git repository")
	}
}

// Issue 34 with an ACP child (the TypeScript SDK's agent side) that
// writes through its own action — a bash it runs itself, in its cwd, not
// through reins's tools: with isolation: worktree its write lands in its
// worktree and is committed on its branch; its attempt on the parent's
// file fails; the parent's tree is untouched.
func TestACPChildIsolated(t *testing.T) {
	nm := testutil.Peers(t)
	sdkPath := filepath.Join(nm, "@agentclientprotocol", "sdk", "dist", "v1", "stable", "acp.js")
	child := filepath.Join(testutil.RepoRoot(t), "internal", "subagent", "acpchild", "testdata", "child.mjs")
	agent := "---\nname: writer\ndescription: a scripted ACP child\nprovider: acp\ncommand: node\n" +
		"args: [\"" + child + "\"]\nisolation: worktree\nenv:\n" +
		"  ACP_SDK_PATH: \"" + sdkPath + "\"\n  ACP_SCENARIO: exec\n" +
		"  ACP_EXEC: \"echo from-acp > acp.txt && (echo pwned >> ../../../../f.txt; true)\"\n---\nUnused.\n"
	url, _ := startMock(t, `
replies:
  - match: delegate-acp
    toolCalls:
      - {id: a, name: subagent, arguments: {description: acp writes, agent: writer, prompt: task}}
  - match: "worktree: branch"
    text: parent done
`)
	cwd, home := t.TempDir(), t.TempDir()
	for name, body := range map[string]string{
		"f.txt":                   "parent\n",
		".reins/agents/writer.md": agent,
	} {
		p := filepath.Join(cwd, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitCmd(t, cwd, "init", "-q")
	gitCmd(t, cwd, "add", "-A")
	gitCmd(t, cwd, "commit", "-q", "-m", "init")
	testutil.Trust(t, home, cwd)
	cmd := acpCmd(t, cwd, home, "run", "--json", "-m", "openai/test", "--base-url", url, "delegate-acp")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reins run: %v\n%s", err, stderr.String())
	}
	var res runResult
	if err := json.Unmarshal(out, &res); err != nil || res.Output != "parent done" {
		t.Fatalf("stdout %q: %v\n%s", out, err, stderr.String())
	}
	if got, _ := os.ReadFile(filepath.Join(cwd, "f.txt")); string(got) != "parent\n" {
		t.Errorf("the ACP child wrote the parent's f.txt: %q", got)
	}
	if _, err := os.Stat(filepath.Join(cwd, "acp.txt")); err == nil {
		t.Error("acp.txt landed in the parent's workspace")
	}
	br := strings.Fields(gitCmd(t, cwd, "branch", "--list", "--format=%(refname:short)", "reins/*"))
	if len(br) != 1 {
		t.Fatalf("branches %v", br)
	}
	if got := gitCmd(t, cwd, "show", br[0]+":acp.txt"); got != "from-acp\n" {
		t.Errorf("acp.txt on %s: %q", br[0], got)
	}
	if got := gitCmd(t, cwd, "log", "-1", "--format=%an|%s", br[0]); got != "reins child "+strings.TrimPrefix(br[0], "reins/")+"|acp writes\n" {
		t.Errorf("commit %q", got)
	}
	if wl := gitCmd(t, cwd, "worktree", "list", "--porcelain"); strings.Count(wl, "worktree ") != 1 {
		t.Errorf("worktrees left after reins ended:\n%s", wl)
	}
}
