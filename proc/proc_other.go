//go:build !unix

package proc

import (
	"os/exec"
	"syscall"
)

// Off Unix (Windows) there are no process groups to signal: the ladder
// ends the leader only (TerminateProcess, which is immediate, for both
// SIGTERM's and SIGKILL's step), and what the leader started itself is
// not reached. Pgid is the leader's pid.

func newGroup(*exec.Cmd) {}

func (p *Process) terminate() { _ = p.Cmd.Process.Kill() }

func (p *Process) kill() { _ = p.Cmd.Process.Kill() }

// groupGone is the leader's exit: the only member this platform tracks.
func (p *Process) groupGone() bool { return p.Exited() }

// GroupGone cannot look into a group here; it reports true so a caller's
// wait ends once the leader it waited for is reaped.
func GroupGone(pgid int) bool { return true }

// LiveInGroup cannot scan processes here: ok is false.
func LiveInGroup(pgid int) (live, ok bool) { return false, false }

func osSignalName(syscall.Signal) (string, bool) { return "", false }
