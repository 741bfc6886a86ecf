package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/session"
)

// Issue 34 on the temporal engine (docs/engine.md): an isolated child's cwd
// is its worktree's path on the parent's machine. A worker that sees that
// folder inside its roots (here: the same machine, --root /tmp) runs the
// child there, and its write lands on the child's branch; a worker whose
// roots do not hold it refuses the run with category configuration, the
// result says why, and nothing is written anywhere.
func TestTemporalIsolatedChild(t *testing.T) {
	cfg, stopServer := temporalSetup(t)
	defer stopServer()
	dir := t.TempDir()
	childScript := filepath.Join(dir, "child.yaml")
	os.WriteFile(childScript, []byte(`replies:
  - match: ISO-REMOTE
    toolCalls: [{id: w1, name: write, arguments: {path: remote.txt, content: "from the worker\n"}}]
  - {match: "wrote 16 bytes", text: wrote remote.txt}
`), 0o644)
	parentScript := filepath.Join(dir, "parent.yaml")
	os.WriteFile(parentScript, []byte(`replies:
  - match: delegate-remote
    toolCalls: [{id: c1, name: subagent, arguments: {description: write on a worker, prompt: ISO-REMOTE write it, isolation: worktree}}]
  - {match: "worktree: branch", text: parent done}
`), 0o644)
	run := func(t *testing.T, cfg string) (string, string) {
		t.Helper()
		repo := t.TempDir()
		os.WriteFile(filepath.Join(repo, "f.txt"), []byte("parent\n"), 0o644)
		gitCmd(t, repo, "init", "-q")
		gitCmd(t, repo, "add", "-A")
		gitCmd(t, repo, "commit", "-q", "-m", "init")
		home := t.TempDir()
		parent := reinsCmdIn(t, repo, home, "run", "--config", cfg, "-m", "mock/echo", "--json", "delegate-remote")
		parent.Env = append(parent.Env, "REINS_MOCK_SCRIPT="+parentScript)
		var pout, perr bytes.Buffer
		parent.Stdout, parent.Stderr = &pout, &perr
		if err := parent.Run(); err != nil {
			t.Fatalf("parent: %v\n%s", err, perr.Bytes())
		}
		var res runResult
		if err := json.Unmarshal(pout.Bytes(), &res); err != nil || res.Output != "parent done" {
			t.Fatalf("parent result %s (%v)\n%s", pout.Bytes(), err, perr.Bytes())
		}
		ld, err := session.Load(filepath.Join(home, "sessions", res.SessionID, session.FileName))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range ld.Events {
			var r session.ToolResult
			if e.Type == session.TypeToolResult && e.Decode(&r) == nil {
				out = append(out, r.Content)
			}
		}
		if len(out) != 1 {
			t.Fatalf("tool results %q", out)
		}
		if got := gitCmd(t, repo, "status", "--porcelain"); got != "" {
			t.Errorf("the parent's checkout changed:\n%s", got)
		}
		return repo, out[0]
	}

	t.Run("worker-sees-the-worktree", func(t *testing.T) {
		w := startWorker(t, cfg, childScript) // --root /tmp: the parent's repository is inside
		defer w.stop()
		repo, res := run(t, cfg)
		if !strings.HasPrefix(res, "wrote remote.txt\nworktree: branch reins/child-") || !strings.Contains(res, "; 1 file changed, +1 -0; merges cleanly into the working tree\nchild: ") {
			t.Fatalf("result %q", res)
		}
		br := strings.Fields(gitCmd(t, repo, "branch", "--list", "--format=%(refname:short)", "reins/*"))
		if len(br) != 1 {
			t.Fatalf("branches %v", br)
		}
		if got := gitCmd(t, repo, "show", br[0]+":remote.txt"); got != "from the worker\n" {
			t.Errorf("remote.txt on %s: %q", br[0], got)
		}
	})

	t.Run("worker-without-the-worktree", func(t *testing.T) {
		// Its own queue, and roots (its --cwd and --root) that do not hold
		// the parent's repository: like a worker on another machine.
		b, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg2 := filepath.Join(t.TempDir(), "temporal.yaml")
		os.WriteFile(cfg2, []byte(strings.Replace(string(b), `taskQueue: "q-`, `taskQueue: "q2-`, 1)), 0o644)
		root := t.TempDir()
		w := &workerProc{home: t.TempDir(), done: make(chan struct{})}
		w.cmd = reinsCmd(t, w.home, "worker", "--config", cfg2, "--cwd", root, "--root", root)
		w.cmd.Env = append(w.cmd.Env, "REINS_MOCK_SCRIPT="+childScript)
		w.cmd.Stderr = &w.errb
		if err := w.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { w.cmd.Wait(); close(w.done) }()
		defer w.stop()
		repo, res := run(t, cfg2)
		want := "Subagent failure (provider: inprocess; stage: engine; category: configuration; stop reason: error)"
		if !strings.Contains(res, want) || !strings.Contains(res, "; 0 files changed, +0 -0; merges cleanly into the working tree"+workerHintForTest) {
			t.Fatalf("result %q", res)
		}
		if files, _ := filepath.Glob(filepath.Join(root, "*")); len(files) != 0 {
			t.Errorf("the refusing worker wrote in its root: %v", files)
		}
		if _, err := os.Stat(filepath.Join(repo, "remote.txt")); err == nil {
			t.Error("remote.txt reached the parent's tree")
		}
	})
}

// workerHintForTest is subagent's workerHint, spelled out: the test
// checks the text the parent's model reads.
const workerHintForTest = "; the worker could not set the child up: an isolated child needs a worker that sees its worktree's folder (this machine, or a file system shared at the same path) inside the worker's --cwd or --root folders"
