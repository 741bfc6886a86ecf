// Package testutil holds helpers shared by tests: where the repository and
// the npm test peers are, and a check that no test process is left behind.
package testutil

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/reinsdev/reins/internal/trust"
)

// RepoRoot is the directory holding go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

// Peers returns testdata/peers/node_modules, where .ci/run installs the
// real npm peers (the ACP TypeScript SDK, pi). Without it the test is
// skipped on a developer machine and fails under CI=true, so CI can never
// pass by skipping.
func Peers(t testing.TB) string {
	t.Helper()
	nm := filepath.Join(RepoRoot(t), "testdata", "peers", "node_modules")
	if _, err := os.Stat(nm); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("npm test peers missing at %s (.ci/run installs them)", nm)
		}
		t.Skipf("npm test peers not installed: run npm ci --prefix testdata/peers")
	}
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node not found")
		}
		t.Skip("node not found")
	}
	return nm
}

// Trust marks dir as a trusted folder in the REINS_HOME home, as
// `reins trust` would, for tests whose workspace carries project files
// (.reins/config.yaml, .reins/agents, .claude/agents): without it reins
// ignores them.
func Trust(t testing.TB, home, dir string) {
	t.Helper()
	if _, err := trust.New(home).Trust(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
}
