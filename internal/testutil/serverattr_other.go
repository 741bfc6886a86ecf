//go:build unix && !linux

package testutil

import "syscall"

// serverAttr puts a test server in its own group (there is no parent-death
// signal off Linux: the test's cleanup stops it).
func serverAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
