//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// What the supervisor tells the confine stage travels on a descriptor,
// not on the command line (issue 47): in the container the stage is pid 1,
// and /proc/1/cmdline is readable by every process there — the policy
// named the workspace, $REINS_HOME, the writable and readable paths and
// the question socket. The stage's command line is now only
// `reins __reins-confine`.

// stageSpec is what the confine stage needs: the policy, the private
// temporary directory, which stage, and the program's command line.
type stageSpec struct {
	Policy Policy   `json:"policy"`
	Tmp    string   `json:"tmp"`
	Stage  string   `json:"stage"`
	Argv   []string `json:"argv"`
	// Repos: the supervisor walks the workspace for repositories and
	// sends them on repoFD (gitwalls.go, walkAhead).
	Repos bool `json:"repos,omitempty"`
	// Gate: the stage starts the program only after one byte on gateFD
	// (the watch's, supervise.go).
	Gate bool `json:"gate,omitempty"`
}

// specFD is the confine stage's descriptor of its stageSpec (fd 3 is the
// report pipe, 4 the host's socket list, 6 the supervisor's walk
// (repoFD), 7 the watch's start byte (gateFD); all four only in the
// container).
const (
	specFD = 5
	gateFD = 7
)

// maxSpec bounds the spec the stage reads: a command line is at most a
// few MiB (ARG_MAX), the policy far less.
const maxSpec = 16 << 20

// specFile is s in a memory file, positioned at its start, to be passed
// as the stage's specFD. A memory file rather than a pipe: a command line
// may exceed a pipe's buffer, and nothing has to write while the stage
// starts.
func specFile(s stageSpec) (*os.File, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	fd, err := unix.MemfdCreate("reins-confine", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), "reins-confine")
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readSpec reads and closes the stage's spec on specFD.
func readSpec() (stageSpec, error) {
	var s stageSpec
	f := os.NewFile(specFD, "reins-confine")
	if f == nil {
		return s, errors.New("no spec")
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSpec+1))
	if err != nil {
		return s, err
	}
	if len(b) > maxSpec {
		return s, errors.New("spec too long")
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, err
	}
	if len(s.Argv) == 0 {
		return s, errors.New("no program")
	}
	return s, nil
}

// closeInherited marks every descriptor from 3 up close-on-exec, so none
// reaches the next program (issue 47). Descriptors a process inherits at
// its start — reins's from an editor, a CI runner or a wrapper that opened
// a directory and did not mark it — stay open across every execve, and
// Go's fork closes nothing the caller did not mark: the supervisor
// inherited them from reins and passed them on to the program, whose
// openat on a directory descriptor of the host walked around the
// container's view. Marking rather than closing leaves this process's own
// use of them (the stage's report pipe) alone. close_range needs Linux
// 5.11; before that, /proc/self/fd is walked.
func closeInherited() {
	if !wallFDs.on() {
		return
	}
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return
	}
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		if fd, err := strconv.Atoi(n); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}
