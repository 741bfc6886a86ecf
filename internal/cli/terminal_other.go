//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd && !windows

package cli

// IsTerminal is false where reins knows no terminal ioctl (wasm, plan9,
// solaris, aix): no interactive session, reins run prints plain lines.
func IsTerminal(any) bool { return false }
