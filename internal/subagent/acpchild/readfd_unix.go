//go:build unix

package acpchild

import (
	"errors"

	"golang.org/x/sys/unix"
)

// pollable: the child's stdout pipe goes through the runtime poller.
const pollable = true

// readFD reads the non-blocking fd once (again past EINTR); again is true
// when the pipe is empty.
func readFD(fd uintptr, p []byte) (n int, again bool, err error) {
	for {
		n, err = unix.Read(int(fd), p)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	return n, errors.Is(err, unix.EAGAIN), err
}

// pending is the number of bytes waiting in the pipe fd, -1 when unknown.
func pending(fd uintptr) int {
	v, err := unix.IoctlGetInt(int(fd), fionread)
	if err != nil {
		return -1
	}
	return v
}
