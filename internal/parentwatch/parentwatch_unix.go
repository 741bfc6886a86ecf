//go:build unix && !linux

package parentwatch

func watch(pid int) { poll(pid) }
