package cli

import (
	"os"

	"golang.org/x/sys/windows"
)

// IsTerminal reports whether v (a stream: stdin, stdout, stderr) is a
// console: a file whose console mode can be read.
func IsTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(f.Fd()), &mode) == nil
}
