//go:build unix && !linux

package acpchild

// fionread is the ioctl that counts the bytes waiting in a pipe: FIONREAD,
// _IOR('f', 127, int) on the BSDs and macOS (x/sys/unix does not name it
// there).
const fionread = 0x4004667f
