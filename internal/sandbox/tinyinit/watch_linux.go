package tinyinit

import (
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// WatchSignals are the signals the watch takes synchronously; ExecWatch
// holds them blocked across the exec. watch_amd64.s holds the same list
// as the mask 0x14807.
var WatchSignals = []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGUSR2, syscall.SIGTERM, syscall.SIGCHLD}

// Watch is what the watch is told (watch.go).
type Watch struct {
	// Pid is the child it watches, a child of this process started from
	// this very thread: its parent-death signal is tied to the thread
	// that forked it, and the exec ends every other thread.
	Pid int
	// Grace is how long the child may take to end after the first
	// forwarded signal before it is killed.
	Grace time.Duration
	// Parent is reins's pid.
	Parent int
	// Report is the read end of the init's report; Start the write end
	// the confine stage waits on.
	Report, Start *os.File
	// Cleanup is the cleanup's executable and arguments (its argv[0]
	// first), run when a path of Missing exists at the end. Its first
	// three arguments come before Missing.
	Cleanup [4]string
	// Missing are the protected paths that were missing at the start.
	Missing []string
}

// ExecWatch replaces this process by the watch in f. It returns only when
// the exec failed, with every descriptor and the signal mask as they were.
func ExecWatch(f *os.File, w Watch) error {
	for _, d := range []*os.File{w.Report, w.Start} {
		if _, err := unix.FcntlInt(d.Fd(), unix.F_SETFD, 0); err != nil {
			return err
		}
	}
	args := []string{"reins", "__reins-watch", strconv.Itoa(w.Pid), strconv.FormatInt(w.Grace.Milliseconds(), 10),
		strconv.Itoa(w.Parent), strconv.Itoa(int(w.Report.Fd())), strconv.Itoa(int(w.Start.Fd()))}
	args = append(append(args, w.Cleanup[:]...), w.Missing...)
	err := execBlocked(f, args, WatchSignals)
	unix.CloseOnExec(int(w.Report.Fd()))
	unix.CloseOnExec(int(w.Start.Fd()))
	return err
}
