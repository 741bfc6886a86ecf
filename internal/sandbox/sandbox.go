// Package sandbox confines and supervises every process reins starts.
//
// A child is never started directly. It is started through a supervisor:
// reins's own executable, re-run with a marker argument (see Command). The
// supervisor
//
//   - makes itself a child subreaper, so every descendant of the child that
//     loses its parent — a `setsid` daemon, a double fork — is re-parented to
//     the supervisor instead of init, where it can still be found;
//   - starts the child in its own process group (the supervisor's), with a
//     private temporary directory as TMPDIR, through a second stage that
//     confines itself with Landlock according to the permission mode and then
//     execs the program (the domain is inherited and cannot be left). The
//     supervisor itself stays outside the domain, so the confined program can
//     neither signal nor ptrace its watcher;
//   - kills every remaining descendant when the child exits, when it is told
//     to stop, and when reins dies — even by SIGKILL: the supervisor notices
//     that its parent is gone (a parent-death signal as a hint, confirmed and
//     backed by polling getppid, which unlike the signal does not depend on
//     which OS thread of reins forked it).
//
// In the container, once the stage runs, the supervisor execs a small
// watch in its own place (internal/sandbox/tinyinit, watch.go), which
// waits, forwards, kills on parent death and after the grace, and cleans
// up without a Go runtime's memory: inside a PID namespace nothing
// escapes, so no sweep is needed there.
//
// So the rules "every process is confined to its permission mode" and
// "nothing outlives reins" live here, in one place, for the bash tool and
// for every kind of child.
package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/reinsdev/reins/internal/helperbin"
	"path/filepath"
	"time"
)

// Mode is a permission mode (docs/sandbox.md); its values are tool.Permission's.
type Mode string

const (
	ReadOnly       Mode = "read-only"
	WorkspaceWrite Mode = "workspace-write"
	FullAccess     Mode = "full-access"
)

// Policy says how one process is confined.
type Policy struct {
	// Mode is the permission mode. read-only: no writes anywhere except the
	// private temporary directory; workspace-write: writes also inside
	// Workspace and Writable; full-access: unconfined (still supervised).
	Mode Mode `json:"mode"`
	// Workspace is the absolute workspace root.
	Workspace string `json:"workspace,omitempty"`
	// Writable are extra paths (directories or files) an agent file named
	// with `sandbox: {writable: [...]}`; honoured under workspace-write only.
	Writable []string `json:"writable,omitempty"`
	// State are paths writable in every confined mode: the state
	// directories of a reins child (its session logs), which it needs even
	// under read-only. A reins child confines its own tools by itself.
	State []string `json:"state,omitempty"`
	// DenyNetwork cuts the process off the network (config
	// `sandbox.network: off`, the default): in the container, its own
	// network namespace with loopback only; without namespaces, Landlock's
	// TCP connect and bind control (ABI 4).
	DenyNetwork bool `json:"denyNetwork,omitempty"`
	// AllowDomains are hosts reached through reins's proxy while the
	// network is off (config `sandbox.allowDomains`; internal/netproxy).
	// Only in the container.
	AllowDomains []string `json:"allowDomains,omitempty"`
	// AskSocket, when set, is reins's question socket (NewQuestions): the
	// proxy asks the user there about a host outside AllowDomains instead
	// of refusing it at once (the interactive terminal's sessions only).
	AskSocket string `json:"askSocket,omitempty"`
	// Home is $REINS_HOME: never writable by a confined process and, in
	// the container, hidden except State and the Readable paths below it.
	Home string `json:"home,omitempty"`
	// Protect are protected paths besides the built-in ones
	// (internal/protect; config `sandbox.protect`), relative to Workspace.
	Protect []string `json:"protect,omitempty"`
	// GitWritable leaves repository control folders (.git) writable by
	// confined processes (config `sandbox.git: writable`, a risk:
	// docs/sandbox.md): only .git/hooks and .git/config stay protected,
	// and a repository a confined process creates is not swept beyond its
	// hooks.
	GitWritable bool `json:"gitWritable,omitempty"`
	// Readable are credential paths the policy opens on purpose (config
	// `sandbox.readable`, absolute), and for a reins child the files of
	// Home it reads (its config).
	Readable []string `json:"readable,omitempty"`
	// Env is the environment policy (config `sandbox.env`).
	Env EnvPolicy `json:"env,omitzero"`
	// Limits are the container's limits (config `sandbox.limits`).
	Limits Limits `json:"limits,omitzero"`
	// NoNamespaces confines with Landlock only, as on a kernel without
	// unprivileged user namespaces (tests of the fallback; Doctor).
	NoNamespaces bool `json:"noNamespaces,omitempty"`
	// Off turns Landlock off (config `sandbox.enabled: false` or
	// `--sandbox=off`): the process is supervised but not confined.
	Off bool `json:"off,omitempty"`
	// TermGrace is how long the supervisor lets the child end by itself
	// after SIGTERM before it kills every descendant. It must stay below
	// the teardown ladder's SIGTERM wait, so the supervisor finishes its
	// sweep before the ladder's SIGKILL could cut it short. Default 1 s.
	TermGrace time.Duration `json:"termGrace,omitempty"`
	// Starting, when set, is called by Argv before each confined process
	// starts: the harness says there, once, what this machine's sandbox
	// lacks, so a run that starts no process never pays the probe's start
	// (Doctor).
	Starting func() `json:"-"`
	// Parent is the pid of the process that starts the supervisor (Argv
	// sets it): the supervisor refuses to start the program when its
	// parent is another by then — its starter died in between.
	Parent int `json:"parent,omitempty"`
}

// Limits bound what a confined process may take of the machine (config
// `sandbox.limits`, docs/sandbox.md "Limits of the container"). A zero
// field is its default.
type Limits struct {
	// Tmp is the size in bytes of the one tmpfs the private /tmp,
	// /var/tmp, /run and /dev/shm share (default DefaultTmp).
	Tmp int64 `json:"tmp,omitempty"`
	// Pids caps the processes of the container (default DefaultPids).
	Pids int `json:"pids,omitempty"`
	// Memory caps the container's memory in bytes where the machine can
	// enforce it (a delegated cgroup v2); 0: unbounded.
	Memory int64 `json:"memory,omitempty"`
}

// The limits' defaults (SPEC §13).
const (
	DefaultTmp  = 512 << 20
	DefaultPids = 512
)

// TmpSize is l.Tmp or its default.
func (l Limits) TmpSize() int64 {
	if l.Tmp > 0 {
		return l.Tmp
	}
	return DefaultTmp
}

// MaxPids is l.Pids or its default.
func (l Limits) MaxPids() int {
	if l.Pids > 0 {
		return l.Pids
	}
	return DefaultPids
}

// Within is l lowered to the fields c sets (a project's `sandbox.limits`,
// which may tighten the user's limits and the defaults, never loosen them).
func (l Limits) Within(c Limits) Limits {
	if c.Tmp > 0 && c.Tmp < l.TmpSize() {
		l.Tmp = c.Tmp
	}
	if c.Pids > 0 && c.Pids < l.MaxPids() {
		l.Pids = c.Pids
	}
	if c.Memory > 0 && (l.Memory == 0 || c.Memory < l.Memory) {
		l.Memory = c.Memory
	}
	return l
}

// Confined reports whether the policy asks for Landlock.
func (p Policy) Confined() bool { return !p.Off && p.Mode != FullAccess }

// Narrow returns the stricter of p's mode and m (a child's mode is at most
// its parent's).
func (p Policy) Narrow(m Mode) Policy {
	if m.Rank() < p.Mode.Rank() {
		p.Mode = m
	}
	return p
}

// Rank orders the modes from read-only (0) to full-access (2); an unknown
// mode is -1, below every real one, so narrowing to it fails closed.
func (m Mode) Rank() int {
	switch m {
	case ReadOnly:
		return 0
	case WorkspaceWrite:
		return 1
	case FullAccess:
		return 2
	}
	return -1
}

// helperArg marks a run of the executable as the supervisor. It is an
// argument rather than argv[0] so that callers who only control the
// arguments (the public sdk client's Options.Args) can use it too.
const helperArg = "__reins-supervise"

// TempPrefix begins the name of the private temporary folder the
// supervisor makes in os.TempDir for each confined program (its TMPDIR)
// and removes when it ends. A supervisor killed with SIGKILL cannot remove
// it; tests that kill one clean it up by this name.
const TempPrefix = "reins-sandbox-"

// UnavailableError says that the kernel lacks a Landlock feature the
// policy needs. The user either runs on a kernel that has it or turns the
// sandbox off explicitly.
type UnavailableError struct {
	// Feature names what is missing, e.g. "Landlock ABI 3 (file truncation)".
	Feature string
	// Have is the kernel's Landlock ABI version (0: no Landlock).
	Have int
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("sandbox unavailable: this kernel lacks %s (it has Landlock ABI %d); "+
		"use a kernel with Landlock, or turn the sandbox off with --sandbox=off or `sandbox: {enabled: false}` in your config",
		e.Feature, e.Have)
}

// Check reports whether the kernel can enforce p. It is cheap and is called
// before a process is started, so a missing feature is a clear start error
// and not a child that dies mysteriously.
func Check(p Policy) error {
	if !p.Confined() {
		return nil
	}
	if p.Mode.Rank() < 0 {
		return fmt.Errorf("sandbox: unknown permission mode %q", p.Mode)
	}
	_, err := plan(p)
	return err
}

// Argv returns the executable and arguments that run name with args under
// the supervisor with policy p. name is resolved on reins's PATH now, so a
// missing program is an error of the start, as it is for exec.Command.
func Argv(p Policy, name string, args ...string) (exe string, argv []string, err error) {
	if err := Check(p); err != nil {
		return "", nil, err
	}
	if p.Starting != nil && p.Confined() {
		p.Starting()
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", nil, err
	}
	if path, err = filepath.Abs(path); err != nil {
		return "", nil, err
	}
	if !supervised {
		return path, args, nil
	}
	exe, err = self()
	if err != nil {
		return "", nil, err
	}
	p.Parent = os.Getpid()
	pol, err := json.Marshal(p)
	if err != nil {
		return "", nil, err
	}
	argv = append([]string{helperArg, string(pol), "--", path}, args...)
	return exe, argv, nil
}

// Command is exec.Command for a process that runs under the supervisor with
// policy p. Start it with the proc package, which makes the supervisor the
// leader of a new process group: the ladder's signals reach both.
func Command(p Policy, name string, args ...string) (*exec.Cmd, error) {
	exe, argv, err := Argv(p, name, args...)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, argv...)
	if len(argv) > 0 && argv[0] == helperArg {
		// The supervisor's runtime starts with one P (supervisorProcsEnv);
		// a caller that sets cmd.Env replaces this with its own.
		cmd.Env = supervisorEnv()
	}
	return cmd, nil
}

// self is the executable the supervisor runs from: reins itself (the lean
// reins that reins-tui or reins-extra was started by, helperbin.Reins: every confined
// process of an interactive session pays a supervisor's start, and reins's
// is the lighter), or a test binary that links this package (whose init
// runs the supervisor too).
func self() (string, error) {
	if exeOverride != "" {
		return exeOverride, nil
	}
	exe, err := helperbin.Reins()
	if err != nil {
		return "", errors.New("sandbox: cannot locate the reins executable: " + err.Error())
	}
	return exe, nil
}

// exeOverride replaces os.Executable in tests that build a separate binary.
var exeOverride string
