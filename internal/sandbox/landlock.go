//go:build linux

package sandbox

import (
	"os"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/reinsdev/reins/internal/lazy"
)

// handledFS are the file-system rights reins restricts: everything ABI 3
// knows (execute, read, write, make, remove, refer, truncate). Device ioctls
// (ABI 5) stay unrestricted: a confined command may still ask a terminal
// its size. Reading and executing are granted everywhere below, so the
// rights that matter are the writing ones.
var handledFS = landlock.AccessFSSet(llsys.AccessFSExecute | llsys.AccessFSWriteFile | llsys.AccessFSReadFile |
	llsys.AccessFSReadDir | llsys.AccessFSRemoveDir | llsys.AccessFSRemoveFile | llsys.AccessFSMakeChar |
	llsys.AccessFSMakeDir | llsys.AccessFSMakeReg | llsys.AccessFSMakeSock | llsys.AccessFSMakeFifo |
	llsys.AccessFSMakeBlock | llsys.AccessFSMakeSym | llsys.AccessFSRefer | llsys.AccessFSTruncate)

// devFiles stay writable in every mode: the bit buckets and the terminal,
// without which ordinary shell commands (`2>/dev/null`) fail.
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom"}

var abiOnce = lazy.Value[int]{New: func() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}}

// ABI is the kernel's Landlock ABI version, 0 where Landlock is missing.
func ABI() int { return abi() }

// abi is replaced in tests to play an older kernel.
var abi = kernelABI

func kernelABI() int { return abiOnce.Get() }

// plan is the Landlock configuration of p, or an *UnavailableError naming
// the feature this kernel lacks.
func plan(p Policy) (landlock.Config, error) {
	abi := ABI()
	if abi < minFSABI {
		return landlock.Config{}, &UnavailableError{Feature: "Landlock ABI 3 (file-system write and truncate control)", Have: abi}
	}
	cfg := landlock.Config{HandledAccessFS: handledFS}
	if abi >= resolveUnixABI {
		cfg.HandledAccessFS |= llsys.AccessFSResolveUnix
	}
	if p.DenyNetwork {
		if abi < minNetABI {
			return landlock.Config{}, &UnavailableError{Feature: "Landlock ABI 4 (TCP connect and bind control, for sandbox.network: false)", Have: abi}
		}
		cfg.HandledAccessNet = landlock.AccessNetSet(llsys.AccessNetBindTCP | llsys.AccessNetConnectTCP)
	}
	if abi >= signalScopeABI {
		// Signals and abstract Unix sockets stay inside the domain: the
		// second wall behind the container's PID and network namespaces,
		// and the only one where namespaces are unavailable.
		cfg.Scoped = landlock.ScopedSet(llsys.ScopeSignal | llsys.ScopeAbstractUnixSocket)
	}
	return cfg, nil
}

// restrict confines the calling process (all its threads) by p, with tmp
// as its private temporary directory. Only the supervisor calls it, just
// before it starts the child: the domain is inherited and cannot be left.
//
// In the container (container is true) Landlock is the second wall: the
// private /tmp, /var/tmp and /dev/shm are writable too, and the network is
// left to the network namespace, where loopback is the process's own (a
// test's local server keeps working with the network off). ownPTS: the
// container's /dev/pts is a devpts of its own (dev.go), whose terminals a
// confined program may open and make (`script`, python's pty).
func restrict(p Policy, tmp string, container, ownPTS bool) error {
	if container {
		p.DenyNetwork = false
	}
	cfg, err := plan(p)
	if err != nil {
		return err
	}
	writable := grantedWrites(p, tmp)
	if container {
		for _, d := range privateDirs {
			if d != "/run" {
				writable = append(writable, d)
			}
		}
		if ownPTS {
			writable = append(writable, "/dev/pts")
		}
	}
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles(devFiles...).IgnoreIfMissing(),
	}
	var dirs, files []string
	for _, w := range writable {
		fi, err := os.Stat(w)
		switch {
		case err != nil:
			// A state path that does not exist yet cannot carry a rule
			// (Landlock rules attach to existing files); it stays read-only.
		case fi.IsDir():
			dirs = append(dirs, w)
		default:
			files = append(files, w)
		}
	}
	if len(dirs) > 0 {
		// refer lets files move between directories inside the writable
		// trees (mv, git); the kernel still refuses a link or move whose
		// source lies outside them.
		rules = append(rules, landlock.RWDirs(dirs...).WithRefer())
	}
	if len(files) > 0 {
		rules = append(rules, landlock.RWFiles(files...))
	}
	if cfg.HandledAccessFS&llsys.AccessFSResolveUnix != 0 && tmp != "" {
		// The one pathname socket made outside the domain that a confined
		// process may reach: the domain proxy's, in its private TMPDIR.
		// Servers it starts itself stay reachable (same domain).
		rules = append(rules, landlock.PathAccess(llsys.AccessFSResolveUnix, tmp))
	}
	return cfg.Restrict(rules...)
}
