//go:build unix

package proc

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// newGroup makes cmd the leader of a new process group, so the ladder's
// signals reach every process it starts.
func newGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// terminate sends SIGTERM to the group.
func (p *Process) terminate() { _ = syscall.Kill(-p.Pgid, syscall.SIGTERM) }

// kill sends SIGKILL to the group.
func (p *Process) kill() { _ = syscall.Kill(-p.Pgid, syscall.SIGKILL) }

func (p *Process) groupGone() bool { return GroupGone(p.Pgid) }

// osSignalName names the signals that only Unix has.
func osSignalName(s syscall.Signal) (string, bool) {
	switch s {
	case syscall.SIGUSR1:
		return "SIGUSR1", true
	case syscall.SIGUSR2:
		return "SIGUSR2", true
	}
	return "", false
}

// GroupGone reports whether no live (non-zombie) process is in group pgid.
// Zombies count as gone: they run nothing and their parent reaps them.
func GroupGone(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return true
	}
	if err != nil {
		return false
	}
	live, ok := LiveInGroup(pgid)
	return ok && !live
}

// LiveInGroup scans /proc for a non-zombie process in group pgid; ok is
// false where /proc cannot be read.
func LiveInGroup(pgid int) (live, ok bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false, false
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		state, pg, ok := parseStat(string(data))
		if ok && pg == pgid && state != "Z" && state != "X" {
			return true, true
		}
	}
	return false, true
}
