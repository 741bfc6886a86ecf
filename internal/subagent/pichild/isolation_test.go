package pichild

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/testutil"
	"github.com/reinsdev/reins/internal/tool"
)

func gitIn(t *testing.T, dir string, args ...string) string { return testutil.Git(t, dir, args...) }

// Issue 34 with a pi child: an agent file's isolation: worktree runs pi in
// its own worktree (its cwd and the sandbox's only writable workspace).
// The fake pi writes there through its own action and tries the parent's
// file; its work is committed on its branch, the parent's file is
// untouched, and the result carries the worktree line.
func TestPiChildIsolated(t *testing.T) {
	f := newFixture(t, `echo from-pi > pi.txt
echo pwned >> ../../../../f.txt 2>/dev/null
`+stopMsg)
	repo, home := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "f.txt"), []byte("parent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "init", "-q")
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "-q", "-m", "init")
	os.MkdirAll(filepath.Join(home, "agents"), 0o755)
	if err := os.WriteFile(filepath.Join(home, "agents", "scout.md"), []byte("---\nname: scout\nprovider: pi\ncommand: pi\nisolation: worktree\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	agents, warns, err := config.LoadAgents(config.LoadOptions{Home: home}, nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("agents: %v %v", err, warns)
	}
	log, err := session.Create(t.TempDir(), session.Header{ID: "parent-1", CreatedAt: time.Now().UTC(), Cwd: repo}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	m := &subagent.Manager{Agents: agents, Providers: map[string]subagent.Provider{config.ProviderPi: f.prov},
		Limits: config.Subagents{MaxDepth: 2}, Log: log, Cwd: repo, Permission: tool.WorkspaceWrite}
	defer m.Close()
	res := m.Delegate(context.Background(), subagent.Params{Description: "pi writes", Prompt: "go", Agent: "scout"})
	if res.IsError || !strings.Contains(res.Content, "final\nworktree: branch reins/child-") || !strings.Contains(res.Content, "; 1 file changed, +1 -0; merges cleanly") {
		t.Fatalf("result %q", res.Content)
	}
	if got, _ := os.ReadFile(filepath.Join(repo, "f.txt")); string(got) != "parent\n" {
		t.Errorf("the pi child wrote the parent's f.txt: %q", got)
	}
	br := strings.Fields(gitIn(t, repo, "branch", "--list", "--format=%(refname:short)", "reins/*"))
	if len(br) != 1 {
		t.Fatalf("branches %v", br)
	}
	if got := gitIn(t, repo, "show", br[0]+":pi.txt"); got != "from-pi\n" {
		t.Errorf("pi.txt on %s: %q", br[0], got)
	}
}
