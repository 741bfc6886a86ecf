//go:build !linux

package sandbox

import (
	"errors"
	"runtime"
)

// Off Linux reins has no sandbox: no Landlock, no namespaces, no
// supervisor. A confined policy is refused at its start (Check says why);
// an unconfined one (full-access, or the sandbox turned off) runs the
// program directly, in its own process group (proc), with reins's
// environment. Doctor says so.

// supervised: processes run directly, not under the supervisor.
const supervised = false

// plan refuses every confined policy: nothing here can enforce it.
func plan(Policy) (struct{}, error) {
	return struct{}{}, &UnavailableError{Feature: "a sandbox (reins confines processes on Linux only, not on " + runtime.GOOS + ")"}
}

// ABI is 0: there is no Landlock here.
func ABI() int { return 0 }

// SeccompSupported is false: there is no seccomp here.
func SeccompSupported() bool { return false }

var errNotLinux = errors.New("no namespaces on " + runtime.GOOS)

func probe() error { return errNotLinux }

// supervisorEnv is nil (reins's own environment) where no supervisor
// stage of this package's runs.
func supervisorEnv() []string { return nil }
