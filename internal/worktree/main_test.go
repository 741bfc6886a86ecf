package worktree

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/testutil"
)

// TestMain makes reins itself the supervisor of the git commands the
// tests run (testutil.MainWithReinsSupervisor): every command is a confined
// process.
func TestMain(m *testing.M) { testutil.MainWithReinsSupervisor(m) }

// BenchmarkGitCall is the cost of one git command of reins's: confined in
// the container (the default) against run directly (the sandbox off).
func BenchmarkGitCall(b *testing.B) {
	dir := b.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
	for _, tc := range []struct {
		name string
		pol  sandbox.Policy
	}{{"confined", sandbox.Policy{}}, {"off", sandbox.Policy{Off: true}}} {
		b.Run(tc.name, func(b *testing.B) {
			r, err := Open(context.Background(), dir, tc.pol)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := r.git(context.Background(), nil, "update-ref", "refs/reins/bench", "HEAD"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSnapshot is the /undo snapshot before each prompt (one
// confined shell script), confined against the sandbox off.
func BenchmarkSnapshot(b *testing.B) {
	dir := b.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("x\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		pol  sandbox.Policy
	}{{"confined", sandbox.Policy{}}, {"off", sandbox.Policy{Off: true}}} {
		b.Run(tc.name, func(b *testing.B) {
			r, err := Open(context.Background(), dir, tc.pol)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := r.Snapshot(context.Background(), "refs/reins/undo/bench/1", "bench"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
