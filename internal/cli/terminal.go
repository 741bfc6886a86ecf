package main

import (
	"os"

	"github.com/charmbracelet/x/term"
)

// isTerminal reports whether v (a stream: stdin, stdout, stderr) is a
// character device (a terminal).
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	// A terminal answers the terminal ioctl; a character device alone is
	// not one (/dev/null, /dev/full: taking those for terminals lost the
	// failed writes of `reins version > /dev/full`, exit 0).
	return term.IsTerminal(f.Fd())
}
