//go:build linux

package sandbox

import (
	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/sys/unix"
)

// terminalFilter refuses the two ioctls that let a process act on a
// terminal beyond writing to it: TIOCSTI pushes bytes into the terminal's
// input queue (a command the user's shell runs after reins exits, or the
// answer to an approval question), and TIOCLINUX does the same through the
// console's selection. A command number with any of the upper 32 bits set
// is refused too: the kernel truncates the number to 32 bits, so a filter
// that compared all 64 could be passed with 0x1_0000_5412.
//
// Everything else stays allowed: the filter is a blocklist on top of the
// namespaces and Landlock, not a syscall allowlist, so no build tool or
// language runtime breaks on a syscall nobody listed.
func terminalFilter() seccomp.Filter {
	deny := func(op seccomp.Operation, v uint64) seccomp.NameWithConditions {
		return seccomp.NameWithConditions{Name: "ioctl", Conditions: seccomp.ArgumentConditions{{Argument: 1, Operation: op, Value: v}}}
	}
	return seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls: []seccomp.SyscallGroup{{
				Action: seccomp.ActionErrno,
				NamesWithCondtions: []seccomp.NameWithConditions{
					deny(seccomp.Equal, unix.TIOCSTI),
					deny(seccomp.Equal, unix.TIOCLINUX),
					deny(seccomp.GreaterThan, 0xffffffff),
				},
			}},
		},
	}
}

// loadSeccomp installs terminalFilter on every thread of this process; it
// is inherited across fork and execve and cannot be removed.
func loadSeccomp() error { return seccomp.LoadFilter(terminalFilter()) }

// SeccompSupported reports whether the kernel can load a seccomp filter.
func SeccompSupported() bool { return seccomp.Supported() }
