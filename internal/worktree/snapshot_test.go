package worktree

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestSnapshotRefs: the refs reins deletes are its own — a name outside
// refs/reins/ or with a newline (which would add a command to
// update-ref's input) is refused before anything is deleted — and a
// Capture is kept under no ref.
func TestSnapshotRefs(t *testing.T) {
	ctx := context.Background()
	dir, r := newRepo(t)
	commit, err := r.Snapshot(ctx, "refs/reins/undo/s/1/start", "snap")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Snapshot(ctx, "refs/heads/main", "snap"); err == nil {
		t.Error("a snapshot ref outside refs/reins/ was made")
	}
	if _, err := r.Capture(ctx, "now"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{
		{"refs/heads/main"},
		{"refs/reins/undo/s/1/start\ndelete refs/heads/main"},
		{"refs/reins/undo/s/1/start", "HEAD"},
	} {
		if err := r.DeleteRefs(ctx, bad); err == nil {
			t.Errorf("DeleteRefs(%q) did not refuse", bad)
		}
	}
	refs, err := r.Refs(ctx, "refs/reins/undo/")
	if err != nil || len(refs) != 1 || refs[0].Name != "refs/reins/undo/s/1/start" || refs[0].Time.IsZero() {
		t.Fatalf("refs %+v: %v", refs, err)
	}
	if _, err := r.Refs(ctx, "refs/heads/"); err == nil {
		t.Error("Refs listed outside refs/reins/")
	}
	if err := r.DeleteRefs(ctx, []string{"refs/reins/undo/s/1/start", "refs/reins/undo/gone/1/end"}); err != nil {
		t.Fatal(err)
	}
	if out := gitT(t, dir, "for-each-ref", "refs/reins/"); out != "" {
		t.Errorf("refs left: %q", out)
	}
	if gitT(t, dir, "cat-file", "-t", commit) != "commit\n" {
		t.Error("the deleted ref's commit is gone (git gc's to prune)")
	}
	if branches := gitT(t, dir, "branch", "--list"); !slices.ContainsFunc(strings.Fields(branches), func(s string) bool { return s == "main" || s == "master" }) {
		t.Errorf("branches: %q", branches)
	}
}
