//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package typeahead

import "golang.org/x/sys/unix"

// Flush returns what discards what was typed on terminal fd and not yet read
// (TIOCFLUSH with FREAD, 1: the BSDs' tcflush TCIFLUSH).
func Flush(fd uintptr) func() {
	return func() { unix.IoctlSetPointerInt(int(fd), unix.TIOCFLUSH, 1) }
}

// fionread is FIONREAD, _IOR('f', 127, int), the same on macOS and the
// BSDs; x/sys/unix does not name it for every one of them.
const fionread = 0x4004667f

// Pending returns what reports whether terminal fd holds input not yet read
// (FIONREAD).
func Pending(fd uintptr) func() bool {
	return func() bool {
		n, err := unix.IoctlGetInt(int(fd), fionread)
		return err == nil && n > 0
	}
}
