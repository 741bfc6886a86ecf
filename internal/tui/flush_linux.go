package tui

import "golang.org/x/sys/unix"

// flushInput discards what was typed on terminal fd and not yet read
// (tcflush TCIFLUSH).
func flushInput(fd uintptr) func() {
	return func() { unix.IoctlSetInt(int(fd), unix.TCFLSH, unix.TCIFLUSH) }
}
