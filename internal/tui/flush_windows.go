package tui

import "golang.org/x/sys/windows"

// flushInput discards the console input not yet read
// (FlushConsoleInputBuffer).
func flushInput(fd uintptr) func() {
	return func() { windows.FlushConsoleInputBuffer(windows.Handle(fd)) }
}

// pendingInput: not told on Windows; the folder question at launch then
// flushes as every question does.
func pendingInput(fd uintptr) func() bool { return nil }
