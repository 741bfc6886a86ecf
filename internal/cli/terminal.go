//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// IsTerminal reports whether v (a stream: stdin, stdout, stderr) is a
// terminal.
func IsTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	// A terminal answers the terminal ioctl; a character device alone is
	// not one (/dev/null, /dev/full: taking those for terminals lost the
	// failed writes of `reins version > /dev/full`, exit 0).
	_, err := unix.IoctlGetTermios(int(f.Fd()), getTermios)
	return err == nil
}
