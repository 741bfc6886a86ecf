//go:build linux

package sandbox

import (
	"slices"
	"strings"
	"testing"
)

// TestHostSockets: the named sockets of /proc/net/unix, a path with spaces
// whole; abstract, unnamed and relative ones left out; duplicates (the
// accepted connections of a listener show its path too) once.
func TestHostSockets(t *testing.T) {
	list := `Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 20001 /run/user/1000/bus
0000000000000000: 00000002 00000000 00010000 0001 01 20002 @/tmp/.X11-unix/X0
0000000000000000: 00000003 00000000 00000000 0001 03 20003
0000000000000000: 00000002 00000000 00010000 0001 01 20004 /home/u/my tmux/default
0000000000000000: 00000003 00000000 00000000 0001 03 20005 /run/user/1000/bus
0000000000000000: 00000002 00000000 00000000 0002 01 20006 relative.sock
0000000000000000: 00000002 00000000 00000000 0002 01 20007 /dev/log
`
	got, err := hostSockets(strings.NewReader(list))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/run/user/1000/bus", "/home/u/my tmux/default", "/dev/log"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
