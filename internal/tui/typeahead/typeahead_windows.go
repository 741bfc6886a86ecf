package typeahead

import "golang.org/x/sys/windows"

// Flush returns what discards the console input not yet read
// (FlushConsoleInputBuffer).
func Flush(fd uintptr) func() {
	return func() { windows.FlushConsoleInputBuffer(windows.Handle(fd)) }
}

// Pending: not told on Windows; the folder question at launch then
// flushes as every question does.
func Pending(fd uintptr) func() bool { return nil }
