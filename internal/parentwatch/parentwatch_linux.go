package parentwatch

import (
	"os"
	"syscall"
)

// watch asks the kernel for SIGTERM when the parent dies, then checks it
// has not died already (between the fork and the prctl).
func watch(pid int) {
	const prSetPdeathsig = 1
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetPdeathsig, uintptr(syscall.SIGTERM), 0); e != 0 {
		poll(pid)
		return
	}
	if os.Getppid() != pid {
		parentGone()
	}
}
