// Package helperbin finds the binaries reins ships beside itself: the
// helpers that hold what only a few commands need (reins-temporal, the
// Temporal SDK; reins-tui, the interactive terminal; reins-extra, demo,
// mock-llm, wrap, acp, view and batch), so that no other
// reins process pays their start-up (BENCHMARKS.md, "Start-up"). One rule
// for all of them: $ENV, else beside this executable (how a release and
// the npm package ship them), else on PATH.
package helperbin

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// ErrNotFound is a helper found neither in its variable, beside this
// executable nor on PATH.
var ErrNotFound = errors.New("not found")

// Find finds the binary name: the path in $env when set, else name
// beside this executable (symlinks resolved: an npm or Homebrew link
// points into the folder that holds both), else name on PATH.
func Find(name, env string) (string, error) {
	if p := os.Getenv(env); p != "" {
		return p, nil
	}
	file := name
	if runtime.GOOS == "windows" {
		file += ".exe"
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err := filepath.EvalSymlinks(exe); err == nil {
			p := filepath.Join(filepath.Dir(exe), file)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p, nil
			}
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", ErrNotFound
}

// ReinsEnv names the reins executable to a helper that reins became
// (reins sets it right before it execs reins-tui or reins-extra): what
// runs `reins sdk` for a reins-provider child and the sandbox's
// supervisor.
const ReinsEnv = "REINS_EXE"

// reins is what TakeReinsEnv took; set once, at start.
var reins string

// TakeReinsEnv is the first thing a helper reins became does: it keeps
// $REINS_EXE for Reins and removes it from the environment, so that no
// process the session starts inherits it (a different reins run inside a
// bash tool must still run its own children).
func TakeReinsEnv() {
	reins = os.Getenv(ReinsEnv)
	os.Unsetenv(ReinsEnv)
}

// TakeReins is TakeReinsEnv for a helper that may also have been started
// directly, not by reins (a user running reins-tui or reins-extra, `go
// run ./cmd/reins-tui`): without $REINS_EXE it looks for reins by the helpers'
// own rule (beside this executable, else on PATH), because the helper
// itself has no `reins sdk` for its children. Found nowhere, Reins is this
// executable and a reins-provider child fails with its own error.
func TakeReins() {
	TakeReinsEnv()
	if reins == "" {
		if p, err := Find("reins", ReinsEnv); err == nil {
			reins = p
		}
	}
}

// Reins is the reins executable: the one TakeReinsEnv took, else this
// executable (reins itself).
func Reins() (string, error) {
	if reins != "" {
		return reins, nil
	}
	return os.Executable()
}
