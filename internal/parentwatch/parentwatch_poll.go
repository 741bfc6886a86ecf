//go:build unix

package parentwatch

import (
	"os"
	"time"
)

// poll checks once a second that the parent is still pid: an orphan is
// adopted by another process (init, a subreaper).
func poll(pid int) {
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for range t.C {
			if os.Getppid() != pid {
				parentGone()
				return
			}
		}
	}()
}
