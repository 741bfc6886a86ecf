//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// mutateEnv names the walls (comma-separated) a test run turns off in the
// supervisor and the confine stage, which are this test binary re-run: the
// mutation check of issue 26 (TestMatrixMutations). Read at package
// initialisation, before the supervisor's init runs.
const mutateEnv = "REINS_TEST_MUTATE"

var _ = func() bool {
	for _, w := range strings.Split(os.Getenv(mutateEnv), ",") {
		if w == "" {
			continue
		}
		if !slices.Contains(allWalls, wall(w)) {
			panic(fmt.Sprintf("%s: unknown wall %q (want one of %v)", mutateEnv, w, allWalls))
		}
		if offWalls == nil {
			offWalls = map[wall]bool{}
		}
		offWalls[wall(w)] = true
	}
	return true
}()

// goInitEnv, set, keeps the Go init in the container instead of the small
// one (internal/sandbox/tinyinit), in the supervisor and confine stage a
// test starts: the tests of the init's duties run with both.
const goInitEnv = "REINS_TEST_GO_INIT"

var _ = func() bool {
	goInit = os.Getenv(goInitEnv) != ""
	goSupervisor = os.Getenv(goSupervisorEnv) != ""
	return true
}()

// goSupervisorEnv, set, keeps the Go supervisor waiting for the container
// instead of the small watch (tinyinit's watch.go): the tests of the
// supervisor's duties run with both.
const goSupervisorEnv = "REINS_TEST_GO_SUPERVISOR"

// Walls are the names of the walls a test may turn off, for the external
// tests' mutation check.
func Walls() []string {
	out := make([]string, len(allWalls))
	for i, w := range allWalls {
		out[i] = string(w)
	}
	return out
}

// MutateEnv is mutateEnv for the external tests.
const MutateEnv = mutateEnv
