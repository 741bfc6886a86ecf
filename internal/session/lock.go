package session

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/reinsdev/reins/internal/filelock"
)

// pidFile is the sidecar beside the log naming the process that holds its
// lock. It is written after the lock is taken and is only a fallback for
// the holder's pid where /proc/locks is unavailable: the lock itself is the
// flock, never this file, so a stale pidFile cannot keep anyone out.
const pidFile = "writer.pid"

// lock takes the exclusive, non-blocking flock that makes f's Log the
// session's only writer. flock belongs to the open file description, so
// two Logs of one process exclude each other as two processes do, and the
// kernel releases it when the descriptor is closed or the process dies.
func lock(f *os.File, id string) error {
	if err := filelock.TryLock(f); errors.Is(err, filelock.ErrLocked) {
		return &InUseError{ID: id, PID: holder(f)}
	} else if err != nil {
		return &WriteError{Path: f.Name(), Err: err}
	}
	// Best effort: the pid is for the message a second writer gets, and
	// where the kernel's lock table names it the sidecar is not written at
	// all (a write and a rename a session's start need not pay for).
	if hasProcLocks() {
		return nil
	}
	dir := filepath.Dir(f.Name())
	tmp := filepath.Join(dir, pidFile+".tmp")
	if os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600) == nil {
		_ = os.Rename(tmp, filepath.Join(dir, pidFile))
	}
	return nil
}

// holder returns the pid of the process holding f's flock: from the
// kernel's own table (/proc/locks, matched by device and inode) where
// there is one, else from the sidecar the holder wrote; 0 when neither
// says.
func holder(f *os.File) int {
	if fi, err := f.Stat(); err == nil {
		if dev, ino, ok := fileID(fi); ok {
			if pid := procLocksHolder(dev, ino); pid > 0 {
				return pid
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(f.Name()), pidFile))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// procLocksPath is the kernel's table of file locks; a variable so a test
// can take it away.
var procLocksPath = "/proc/locks"

// hasProcLocks reports whether the kernel's lock table can be read here.
func hasProcLocks() bool {
	_, err := os.Stat(procLocksPath)
	return err == nil
}

// procLocksHolder finds the FLOCK WRITE lock on device dev, inode ino in
// /proc/locks, whose lines read
// "1: FLOCK  ADVISORY  WRITE 4711 fd:01:123456 0 EOF".
func procLocksHolder(dev, ino uint64) int {
	f, err := os.Open(procLocksPath)
	if err != nil {
		return 0
	}
	defer f.Close()
	major := (dev>>8)&0xfff | (dev>>32)&^0xfff
	minor := dev&0xff | (dev>>12)&^0xff
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// A blocked waiter's line starts "1: ->"; it holds nothing.
		if len(fields) < 6 || fields[1] != "FLOCK" || fields[3] != "WRITE" {
			continue
		}
		id := strings.Split(fields[5], ":")
		if len(id) != 3 {
			continue
		}
		ma, err1 := strconv.ParseUint(id[0], 16, 64)
		mi, err2 := strconv.ParseUint(id[1], 16, 64)
		in, err3 := strconv.ParseUint(id[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || ma != major || mi != minor || in != ino {
			continue
		}
		if pid, err := strconv.Atoi(fields[4]); err == nil && pid > 0 {
			return pid
		}
	}
	return 0
}

// Writer returns the pid of the process holding the write lock of the log
// at path, 0 when none does or it cannot be told. It takes no lock: it is
// for readers (reins log) that want to say a session is live rather than
// crashed. It asks the kernel's lock table only, never the writer.pid
// sidecar, which a crashed writer leaves behind.
func Writer(path string) int {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	dev, ino, ok := fileID(fi)
	if !ok {
		return 0
	}
	return procLocksHolder(dev, ino)
}
