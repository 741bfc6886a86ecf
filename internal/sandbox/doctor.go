package sandbox

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/reinsdev/reins/internal/sandbox/tinyinit"
)

// Report is what the sandbox enforces on this machine (`reins doctor`).
type Report struct {
	// Namespaces: unprivileged user namespaces work, so confined processes
	// run in the container (container.go). NamespaceErr says why not.
	Namespaces   bool
	NamespaceErr string
	// LandlockABI is the kernel's Landlock ABI (0: none).
	LandlockABI int
	// Seccomp: the terminal filter (TIOCSTI, TIOCLINUX) can be loaded.
	Seccomp bool
}

// Doctor probes the machine.
func Doctor() Report {
	r := Report{LandlockABI: ABI(), Seccomp: SeccompSupported()}
	if err := probe(); err != nil {
		r.NamespaceErr = err.Error()
	} else {
		r.Namespaces = true
	}
	return r
}

// Weaker is one line saying what the fallback lacks, "" when nothing.
func (r Report) Weaker() string {
	if r.Namespaces {
		return ""
	}
	sockets := "UDP and the Unix sockets of outside servers stay reachable"
	if r.LandlockABI >= resolveUnixABI {
		sockets = "UDP stays reachable"
	}
	return "no unprivileged user namespaces here: Landlock only, so the protected paths, every .git, credential files and $REINS_HOME inside the workspace stay readable/writable by the workspace rules, metadata outside (chmod, touch, xattrs) can change, the host's /dev is visible, sandbox.limits do not hold, " + sockets
}

// Lines is the report as `reins doctor` prints it: one fact a line.
func (r Report) Lines() []string {
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	if !supervised {
		return []string{
			"sandbox: not enforced on " + runtime.GOOS + " (reins confines and supervises processes on Linux only)",
			"confined permission modes (read-only, workspace-write) refuse to start tools, MCP servers and children; --sandbox=off runs them unconfined",
			"environment: not scrubbed (the supervisor that scrubs it runs on Linux only)",
		}
	}
	var l []string
	if r.Namespaces {
		l = append(l, "namespaces: user, mount, pid, ipc, network — yes (confined processes run in a container)")
		l = append(l, "read-only root, private /tmp and /run, credential files hidden, protected paths and every .git read-only, outside servers' Unix sockets covered: yes")
		l = append(l, "network off by default: yes (own network namespace, loopback only; abstract sockets of the host unreachable)")
		l = append(l, "/dev: the container's own (null, zero, full, random, urandom, tty, its own pts and shm; no disk or other device of the host): yes")
		l = append(l, "container's init: not dumpable, not traceable (ptrace and process_vm_readv/writev refused), no policy on its command line: yes; "+initKind())
		l = append(l, "limits: private /tmp, /var/tmp, /run and /dev/shm share one tmpfs of sandbox.limits.tmp: yes; process cap (sandbox.limits.pids): yes, kept by the container's init; memory (sandbox.limits.memory): not enforced (reins uses no cgroup)")
	} else {
		l = append(l, "namespaces: no ("+r.NamespaceErr+")")
		l = append(l, "fallback: "+r.Weaker())
		l = append(l, "limits: none (no container: /tmp is the host's, no process cap, memory unbounded)")
	}
	l = append(l, "inherited descriptors: closed before every program starts: yes")
	switch {
	case r.LandlockABI >= resolveUnixABI:
		l = append(l, fmt.Sprintf("landlock: ABI %d — writes, truncation, TCP, signals, abstract and pathname Unix sockets scoped", r.LandlockABI))
	case r.LandlockABI >= signalScopeABI:
		l = append(l, fmt.Sprintf("landlock: ABI %d — writes, truncation, TCP, signals and abstract sockets scoped; pathname Unix sockets only by the container (needs ABI %d)", r.LandlockABI, resolveUnixABI))
	case r.LandlockABI >= minNetABI:
		l = append(l, fmt.Sprintf("landlock: ABI %d — writes, truncation and TCP; no signal or abstract-socket scoping (needs ABI %d)", r.LandlockABI, signalScopeABI))
	case r.LandlockABI >= minFSABI:
		l = append(l, fmt.Sprintf("landlock: ABI %d — writes and truncation; no TCP control (needs ABI %d)", r.LandlockABI, minNetABI))
	default:
		l = append(l, fmt.Sprintf("landlock: ABI %d — not enough (needs %d): confined modes refuse to start", r.LandlockABI, minFSABI))
	}
	l = append(l, "seccomp (TIOCSTI, TIOCLINUX, ptrace, process_vm_readv/writev refused): "+yes(r.Seccomp))
	l = append(l, "environment: secrets scrubbed from tools, MCP servers and children: yes")
	return l
}

// String says l as `reins doctor` prints the configured limits.
func (l Limits) String() string {
	mem := "memory unbounded"
	if l.Memory > 0 {
		mem = "memory " + sizeText(l.Memory) + " (not enforced here)"
	}
	return fmt.Sprintf("private tmpfs %s, at most %d processes, %s", sizeText(l.TmpSize()), l.MaxPids(), mem)
}

// sizeText is n bytes in the largest binary unit that divides it.
func sizeText(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// String is Lines joined.
func (r Report) String() string { return strings.Join(r.Lines(), "\n") + "\n" }

// initKind says which init and supervisor the container gets on this
// machine.
func initKind() string {
	if tinyinit.Image() != nil && tinyinit.WatchImage() != nil {
		return "the small init (reins-init, about 12 kB) and the small watch as its supervisor (reins-watch, about 12 kB), or the Go ones where the domain proxy runs"
	}
	return "the confine stage and the Go supervisor (Go processes, about 1 MiB each; no small init for " + runtime.GOARCH + ")"
}
