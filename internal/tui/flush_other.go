//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package tui

import "golang.org/x/sys/unix"

// flushInput discards what was typed on terminal fd and not yet read
// (TIOCFLUSH with FREAD, 1: the BSDs' tcflush TCIFLUSH).
func flushInput(fd uintptr) func() {
	return func() { unix.IoctlSetPointerInt(int(fd), unix.TIOCFLUSH, 1) }
}
