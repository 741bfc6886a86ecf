package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/reinsdev/reins/internal/helperbin"
)

// UseReinsSupervisor makes reins itself (built once, without -race) the
// sandbox's supervisor for the processes a test binary starts, as it is
// in a release, and returns what removes it. For packages that start a
// confined process for every step (reins's own git: internal/worktree,
// internal/undo): a test binary built with -race starts several times
// slower, and the supervisor's own code is the sandbox package's, whose
// tests run it under the race detector. $REINS_EXE names a reins to use
// instead. Called from TestMain, before any process starts.
func UseReinsSupervisor() (cleanup func(), err error) {
	cleanup = func() {}
	if os.Getenv(helperbin.ReinsEnv) == "" {
		dir, err := os.MkdirTemp("", "reins-supervisor-")
		if err != nil {
			return cleanup, err
		}
		bin := filepath.Join(dir, "reins")
		if out, err := exec.Command("go", "build", "-o", bin, "github.com/reinsdev/reins/cmd/reins").CombinedOutput(); err != nil {
			os.RemoveAll(dir)
			return cleanup, fmt.Errorf("go build ./cmd/reins: %v\n%s", err, out)
		}
		os.Setenv(helperbin.ReinsEnv, bin)
		cleanup = func() { os.RemoveAll(dir) }
	}
	helperbin.TakeReinsEnv()
	return cleanup, nil
}

// MainWithReinsSupervisor is a TestMain whose package's confined processes
// are supervised by reins itself (UseReinsSupervisor): it runs the tests
// and exits with their status.
func MainWithReinsSupervisor(m *testing.M) {
	cleanup, err := UseReinsSupervisor()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}
