package testutil

import "syscall"

// serverAttr puts a test server in its own group, killed with the test
// process even when that dies by SIGKILL.
func serverAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
