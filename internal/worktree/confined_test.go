package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/sandbox"
)

// TestRepositoryCodeRunsConfined is the attack of a hostile repository
// (issue 47, attack 1 and item 2): its .git/config, written before reins
// runs (a repository the user cloned, or a config a commondir points to),
// names commands that git runs for reins's own bookkeeping — a clean
// filter routed to every file by .gitattributes (git add -A of the /undo
// snapshot and of a worktree child's base), a textconv driver (the diff
// `reins worktree` shows). Flags cannot switch these off. Each writes a
// marker outside the workspace (in /tmp, which the container makes
// private) and one in the working tree (on the host's disk, which these
// operations may not write); run through reins, the command may run, but
// confined: neither is written, while the one it writes where the
// operation may write (the git directory) shows it ran.
// With the sandbox off (the mutation: reins's git before this change ran
// so, always) the marker outside is written.
func TestRepositoryCodeRunsConfined(t *testing.T) {
	tests := []struct {
		name   string
		config string // added to .git/config; %[1]s is the script
		attrs  string
		// op runs reins's git; its text (a diff) shows a read-only
		// command's driver ran, where it cannot leave a mark.
		op func(ctx context.Context, r *Repo) (string, error)
	}{
		{"clean filter, undo snapshot", "[filter \"x\"]\n\tclean = %[1]s\n", "* filter=x\n",
			func(ctx context.Context, r *Repo) (string, error) {
				_, err := r.Snapshot(ctx, "refs/reins/undo/s/1", "snapshot")
				return "", err
			}},
		{"clean filter, worktree child", "[filter \"x\"]\n\tclean = %[1]s\n", "* filter=x\n",
			func(ctx context.Context, r *Repo) (string, error) {
				_, err := r.Create(ctx, "c1", "a child")
				return "", err
			}},
		{"process filter, undo snapshot", "[filter \"x\"]\n\tprocess = %[1]s\n", "* filter=x\n",
			func(ctx context.Context, r *Repo) (string, error) {
				r.Snapshot(ctx, "refs/reins/undo/s/1", "snapshot") // the script speaks no protocol: git fails
				return "", nil
			}},
		{"textconv, worktree diff", "[diff \"x\"]\n\ttextconv = %[1]s\n", "*.txt diff=x\n",
			func(ctx context.Context, r *Repo) (string, error) {
				if _, err := r.Create(ctx, "c1", "a child"); err != nil {
					return "", err
				}
				if err := os.WriteFile(filepath.Join(r.Dir("c1"), "f.txt"), []byte("changed\n"), 0o644); err != nil {
					return "", err
				}
				if _, err := r.Commit(ctx, "c1", "change"); err != nil {
					return "", err
				}
				return r.Diff(ctx, "c1", 0)
			}},
	}
	for _, tc := range tests {
		for _, off := range []bool{false, true} {
			name := tc.name
			if off {
				name += ", sandbox off"
			}
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				dir := t.TempDir()
				outside := filepath.Join(t.TempDir(), "pwned")
				gitT(t, dir, "init", "-q")
				write(t, dir, "f.txt", "one\n")
				gitT(t, dir, "add", "-A")
				gitT(t, dir, "commit", "-q", "-m", "init")
				ran := filepath.Join(dir, ".git", "filter-ran")
				// Outside the git directory but on the host's disk (not
				// the container's private /tmp): the working tree, which
				// none of these operations may write.
				inTree := filepath.Join(dir, "pwned-in-tree")
				script := filepath.Join(t.TempDir(), "hostile.sh")
				if err := os.WriteFile(script, []byte(fmt.Sprintf("#!/bin/sh\necho ran >> %q\necho pwned > %q\necho pwned > %q\necho via-x\nif [ $# -gt 0 ]; then cat \"$1\"; else cat; fi\n", ran, outside, inTree)), 0o755); err != nil {
					t.Fatal(err)
				}
				f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(f, tc.config, script)
				f.Close()
				write(t, dir, ".gitattributes", tc.attrs)
				write(t, dir, "f.txt", "two\n") // a change, so the filter has work
				r, err := Open(ctx, dir, sandbox.Policy{Off: off})
				if err != nil {
					t.Fatal(err)
				}
				text, err := tc.op(ctx, r)
				if err != nil {
					t.Fatal(err)
				}
				_, err = os.Stat(outside)
				_, errTree := os.Stat(inTree)
				if off {
					if err != nil {
						t.Fatalf("unconfined, the repository's command did not write its marker (%v): the test shows nothing", err)
					}
					return
				}
				if err == nil {
					t.Errorf("the repository's command wrote %s outside the workspace: git ran unconfined", outside)
				}
				if errTree == nil {
					t.Errorf("the repository's command wrote %s in the working tree, which the operation may not write", inTree)
				}
				if _, err := os.Stat(ran); err != nil && !strings.Contains(text, "via-x") {
					t.Errorf("the repository's command did not run at all (%v): the test shows nothing", err)
				}
			})
		}
	}
}
