//go:build unix

package parentwatch

import (
	"os"
	"strconv"
	"syscall"
)

// Start arms the watch when $REINS_LAUNCHER_PID names this process's
// parent; otherwise it takes the variable out of the environment, so that
// nothing this process starts reads it.
func Start() {
	v := os.Getenv(Env)
	if v == "" {
		return
	}
	pid, err := strconv.Atoi(v)
	if err != nil || pid <= 1 || os.Getppid() != pid {
		os.Unsetenv(Env)
		return
	}
	watch(pid)
}

// parentGone is what the watch does when the launcher died: SIGTERM to
// this process, whose handlers end it as they end any terminated command
// (or the default action, before any is installed).
func parentGone() { syscall.Kill(os.Getpid(), syscall.SIGTERM) }
