//go:build unix

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// HoldInput makes the terminal keep what the user types from the first
// moment reins runs, before the screen is up (opening the session, MCP
// servers and agent files can take a while): canonical mode and echo off,
// and CR no longer turned into LF, so a key typed now reaches the screen
// as the same key later (Enter stays Enter) and nothing is echoed over
// the screen being drawn. Output processing and signals are left alone,
// so messages printed while starting still read right and Ctrl-C still
// interrupts. The screen itself then takes the terminal raw and gives it
// back in this state; restore puts back the one reins found.
//
// Keys typed before this runs (while the process starts) went through the
// canonical line discipline: Enter among them arrives as LF, which the
// screen takes as Enter too (internal/tui). reins-tui calls it first
// thing; reins became reins-tui by exec, the terminal untouched.
func HoldInput(f *os.File) (restore func()) {
	fd := int(f.Fd())
	orig, err := unix.IoctlGetTermios(fd, getTermios)
	if err != nil {
		return func() {}
	}
	t := *orig
	t.Lflag &^= unix.ICANON | unix.ECHO | unix.ECHONL | unix.IEXTEN
	t.Iflag &^= unix.ICRNL | unix.INLCR | unix.IGNCR
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if unix.IoctlSetTermios(fd, setTermios, &t) != nil {
		return func() {}
	}
	return func() { unix.IoctlSetTermios(fd, setTermios, orig) }
}
