package testutil

import (
	"os/exec"
	"testing"
)

// Git runs git in dir with a fixed identity and default branch (main), so
// a test's repository does not depend on the machine's git config, and
// returns its combined output; a failure fails the test with that output.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}
