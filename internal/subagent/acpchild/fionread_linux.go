package acpchild

import "golang.org/x/sys/unix"

// fionread is the ioctl that counts the bytes waiting in a pipe (Linux
// names FIONREAD TIOCINQ).
const fionread = unix.TIOCINQ
