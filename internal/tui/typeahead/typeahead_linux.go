package typeahead

import "golang.org/x/sys/unix"

// Flush returns what discards what was typed on terminal fd and not yet read
// (tcflush TCIFLUSH).
func Flush(fd uintptr) func() {
	return func() { unix.IoctlSetInt(int(fd), unix.TCFLSH, unix.TCIFLUSH) }
}

// Pending returns what reports whether terminal fd holds input not yet read
// (TIOCINQ, the tty's FIONREAD).
func Pending(fd uintptr) func() bool {
	return func() bool {
		n, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ)
		return err == nil && n > 0
	}
}
