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

// SkipPeersEnv names the environment variable a user sets to 1 to skip,
// explicitly, the tests that need an external peer (the npm test peers,
// node, python3). Without it a missing peer fails the test: the README's
// test command (scripts/test) installs the peers, so nothing is skipped
// silently. See README.md, "Run the tests".
const SkipPeersEnv = "REINS_TEST_SKIP_PEERS"

// MissingPeer ends the test for a missing external peer: skipped when the
// user asked for it with REINS_TEST_SKIP_PEERS=1, failed otherwise with a
// message saying how to get it.
func MissingPeer(t testing.TB, what string) {
	t.Helper()
	if os.Getenv(SkipPeersEnv) == "1" {
		t.Skipf("%s (skipped: %s=1)", what, SkipPeersEnv)
	}
	t.Fatalf("%s: run scripts/test, which installs the test peers and says what else it needs (or set %s=1 to skip these tests)", what, SkipPeersEnv)
}

// Python returns the path of python3, or ends the test (MissingPeer).
func Python(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		MissingPeer(t, "python3 not found")
	}
	return p
}

// Peers returns testdata/peers/node_modules, where scripts/test installs
// the real npm peers (the ACP TypeScript SDK, pi, the reference MCP
// servers). When they or node are missing the test fails, unless
// REINS_TEST_SKIP_PEERS=1 (MissingPeer).
func Peers(t testing.TB) string {
	t.Helper()
	nm := filepath.Join(RepoRoot(t), "testdata", "peers", "node_modules")
	if _, err := os.Stat(nm); err != nil {
		MissingPeer(t, "npm test peers not installed at "+nm)
	}
	if _, err := exec.LookPath("node"); err != nil {
		MissingPeer(t, "node not found")
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
