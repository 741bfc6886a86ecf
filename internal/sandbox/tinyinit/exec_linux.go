package tinyinit

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Descriptors the init uses (tinyinit.go): 3 for the report of a signal
// death, 4 for /proc when it keeps a process cap.
const (
	ReportFD = 3
	ProcFD   = 4
)

// Signals are the signals the init takes synchronously: the caller must
// hold them blocked (Exec does) from before it execs the init, or one sent
// in between is dropped by the kernel. The Go init (sandbox's initProgram)
// takes the same list; tinyinit_amd64.s holds it as the mask 0x14007.
var Signals = []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGCHLD}

// File is the image in a sealed memory file, to be run by Exec. It is
// made before the caller confines itself: exec'ing it needs no path in
// the container's view (and Landlock allows a file of an internal mount).
// The seals keep anyone who reaches the descriptor from changing it.
func File() (*os.File, error) { return file("reins-init", Image()) }

// WatchFile is the watch's image in a sealed memory file, to be run by
// ExecWatch.
func WatchFile() (*os.File, error) { return file("reins-watch", WatchImage()) }

func file(name string, img []byte) (*os.File, error) {
	if img == nil {
		return nil, errors.ErrUnsupported
	}
	flags := unix.MFD_CLOEXEC | unix.MFD_ALLOW_SEALING
	fd, err := unix.MemfdCreate(name, flags|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) {
		// Before Linux 6.3 there is no MFD_EXEC; a memory file is
		// executable by default there.
		fd, err = unix.MemfdCreate(name, flags)
	}
	if err != nil {
		return nil, fmt.Errorf("memfd: %w", err)
	}
	// Above the descriptors the init is handed (ReportFD, ProcFD), or
	// the caller's dup2 onto those would replace the file to be run.
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 10)
	unix.Close(fd)
	if err != nil {
		return nil, fmt.Errorf("memfd: %w", err)
	}
	f := os.NewFile(uintptr(high), name)
	if _, err := f.Write(img); err != nil {
		f.Close()
		return nil, err
	}
	// Execute only: a file its process may not read makes the kernel
	// start the new image not dumpable (fs.suid_dumpable, 0 by default),
	// so the instant between the exec and the init's own
	// PR_SET_DUMPABLE is closed too — the program already runs then, and
	// could otherwise read or write pid 1's memory through /proc/1/mem.
	if err := unix.Fchmod(int(f.Fd()), 0o100); err != nil {
		f.Close()
		return nil, fmt.Errorf("memfd: %w", err)
	}
	seals := unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE | unix.F_SEAL_SEAL
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, seals); err != nil {
		f.Close()
		return nil, fmt.Errorf("seal: %w", err)
	}
	return f, nil
}

// Exec replaces this process by the init in f, which starts the program
// path with argv (argv[0] included) and this process's environment, then
// waits for it. maxProcs > 0 is the process cap, counted in the folder open
// on ProcFD; overCap is the line written past it, startFailed the line
// written when the program cannot be started. Descriptor ReportFD must stay
// open across the exec (so must ProcFD with a cap; the program gets
// neither), and every other descriptor above 2 should close on it.
//
// Exec returns only when the exec failed, with this thread's signal mask
// as it was.
func Exec(f *os.File, path string, argv []string, maxProcs int, overCap, startFailed string) error {
	args := append([]string{"reins", "__reins-confine", strconv.Itoa(max(maxProcs, 0)), overCap, startFailed, path}, argv...)
	// The environment is the program's; the init itself reads none, and
	// nobody in the container can read it there (not dumpable). It also
	// keeps what marks every process of a test run (REINS_TEST_MARK, read
	// by the suite's orphan check) on pid 1.
	return execBlocked(f, args, Signals)
}

// execBlocked execs f with args and this process's environment on this
// thread with sigs blocked, which the new image inherits (execve keeps the
// thread's mask). It returns only when the exec failed, with the mask as
// it was.
func execBlocked(f *os.File, args []string, sigs []syscall.Signal) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set, old unix.Sigset_t
	for _, s := range sigs {
		set.Val[(int(s)-1)/64] |= 1 << ((uint(s) - 1) % 64)
	}
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, &old); err != nil {
		return err
	}
	err := execFD(f, args, os.Environ())
	_ = unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	return err
}

// execFD is execveat(fd, "", argv, env, AT_EMPTY_PATH): the
// file itself, not its /proc/self/fd link, which a process that is not
// dumpable cannot follow unless it is root (the folder is root's then).
func execFD(f *os.File, argv, env []string) error {
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return err
	}
	envp, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return err
	}
	empty := []byte{0}
	_, _, e := syscall.Syscall6(unix.SYS_EXECVEAT, f.Fd(), uintptr(unsafe.Pointer(&empty[0])),
		uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])), unix.AT_EMPTY_PATH, 0)
	return e
}
