//go:build !linux

package acpchild

import "golang.org/x/sys/unix"

// fionread is the ioctl that counts the bytes waiting in a pipe.
const fionread = unix.FIONREAD
