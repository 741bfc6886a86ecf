//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The terminal filter refuses the two ioctls that let a process act on a
// terminal beyond writing to it: TIOCSTI pushes bytes into the terminal's
// input queue (a command the user's shell runs after reins exits, or the
// answer to an approval question), and TIOCLINUX does the same through the
// console's selection. A command number with any of the upper 32 bits set
// is refused too: the kernel truncates the number to 32 bits, so a filter
// that compared all 64 could be passed with 0x1_0000_5412.
//
// It also refuses ptrace, process_vm_readv and process_vm_writev (EPERM;
// issue 47): a confined process neither stops nor reads nor writes another
// process — above all the container's init, which shares its uid and
// Landlock domain and would otherwise be traceable (stop it and the tool
// call hangs to its timeout; make it write a forged report). Debuggers
// and strace therefore do not work under confinement.
//
// Everything else stays allowed: the filter is a blocklist on top of the
// namespaces and Landlock, not a syscall allowlist, so no build tool or
// language runtime breaks on a syscall nobody listed.
//
// It is 19 to 37 classic BPF instructions written here rather than built
// by a policy library: the one we used (go-seccomp-bpf) builds syscall
// tables for every architecture when a program starts, which every start
// of reins paid — twice per confined process, in the supervisor and in the
// confine stage (BENCHMARKS.md, the container's cost). Its filter also let
// every call of a second ABI through unchecked (a 32-bit `int 0x80` ioctl
// on x86-64); this one checks that ABI's ioctl with the same rule.

// seccompArch is what the filter needs to know of an architecture.
type seccompArch struct {
	audit uint32 // AUDIT_ARCH_* of native system calls
	ioctl uint32 // the native ioctl number
	// x32: on x86-64, system call numbers with this bit set are the x32
	// ABI's, which share the native audit arch; all are refused (ENOSYS),
	// as a blocklist filter must, or its ioctl would pass unchecked.
	x32 uint32
	// compat and compatIoctl: the 32-bit ABI a 64-bit kernel also runs
	// (int 0x80 on x86-64, AArch32 on arm64), whose ioctl is checked too;
	// 0 where there is none.
	compat, compatIoctl uint32
	// trace and compatTrace are the numbers of ptrace, process_vm_readv
	// and process_vm_writev, natively and in the compat ABI: refused with
	// EPERM, so no confined process reads or writes another's memory or
	// stops it — the container's init above all (issue 47).
	trace, compatTrace []uint32
}

// archOf is the filter's view of goarch; ok is false for an architecture
// the filter does not know (the confine stage then fails closed).
func archOf(goarch string) (a seccompArch, ok bool) {
	// ptrace, process_vm_readv, process_vm_writev per table: the generic
	// one (arm64, riscv64, loong64), i386's, arm's.
	generic, i386, arm := []uint32{117, 270, 271}, []uint32{26, 347, 348}, []uint32{26, 376, 377}
	switch goarch {
	case "amd64":
		return seccompArch{audit: unix.AUDIT_ARCH_X86_64, ioctl: 16, x32: 0x40000000, compat: unix.AUDIT_ARCH_I386, compatIoctl: 54,
			trace: []uint32{101, 310, 311}, compatTrace: i386}, true
	case "arm64":
		return seccompArch{audit: unix.AUDIT_ARCH_AARCH64, ioctl: 29, compat: unix.AUDIT_ARCH_ARM, compatIoctl: 54, trace: generic, compatTrace: arm}, true
	case "386":
		return seccompArch{audit: unix.AUDIT_ARCH_I386, ioctl: 54, trace: i386}, true
	case "arm":
		return seccompArch{audit: unix.AUDIT_ARCH_ARM, ioctl: 54, trace: arm}, true
	case "riscv64":
		return seccompArch{audit: unix.AUDIT_ARCH_RISCV64, ioctl: 29, trace: generic}, true
	case "loong64":
		return seccompArch{audit: unix.AUDIT_ARCH_LOONGARCH64, ioctl: 29, trace: generic}, true
	case "ppc64le":
		return seccompArch{audit: unix.AUDIT_ARCH_PPC64LE, ioctl: 54, trace: []uint32{26, 351, 352}}, true
	case "s390x":
		return seccompArch{audit: unix.AUDIT_ARCH_S390X, ioctl: 54, trace: []uint32{26, 340, 341}}, true
	}
	return seccompArch{}, false
}

// Offsets in struct seccomp_data: nr, arch, instruction_pointer, args[6].
const (
	seccompNrOff   = 0
	seccompArchOff = 4
	seccompArg1Off = 16 + 8 // args[1], the ioctl's command
)

const (
	retAllow = unix.SECCOMP_RET_ALLOW
	retEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retNoSys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
)

// refuse is a check of the loaded system call number against nrs, each
// refused with EPERM.
func refuse(nrs []uint32) []bpf.Instruction {
	var out []bpf.Instruction
	for _, nr := range nrs {
		out = append(out,
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: nr, SkipFalse: 1},
			bpf.RetConstant{Val: retEPERM},
		)
	}
	return out
}

// terminalFilter is the filter for a, with the halves of a 64-bit
// argument in the byte order bigEndian says. With noTrace it also refuses
// ptrace and process_vm_readv/writev (a.trace).
func terminalFilter(a seccompArch, bigEndian, noTrace bool) []bpf.Instruction {
	if !noTrace {
		a.trace, a.compatTrace = nil, nil
	}
	lo, hi := uint32(seccompArg1Off), uint32(seccompArg1Off+4)
	if bigEndian {
		lo, hi = hi, lo
	}
	// The argument check, shared by the native and the compat ioctl (a
	// 32-bit process's arguments arrive zero-extended).
	check := []bpf.Instruction{
		bpf.LoadAbsolute{Off: hi, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: 0, SkipTrue: 4}, // → deny
		bpf.LoadAbsolute{Off: lo, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.TIOCSTI, SkipTrue: 2},   // → deny
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.TIOCLINUX, SkipTrue: 1}, // → deny
		bpf.RetConstant{Val: retAllow},
		bpf.RetConstant{Val: retEPERM},
	}
	prog := []bpf.Instruction{bpf.LoadAbsolute{Off: seccompArchOff, Size: 4}}
	if a.compat != 0 {
		refused := refuse(a.compatTrace)
		compat := []bpf.Instruction{
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: a.compat, SkipFalse: uint8(2 + len(refused))}, // another arch → allow
			bpf.LoadAbsolute{Off: seccompNrOff, Size: 4},
		}
		compat = append(compat, refused...)
		compat = append(compat,
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: a.compatIoctl, SkipTrue: 1}, // → check
			bpf.RetConstant{Val: retAllow},
		)
		compat = append(compat, check...)
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: a.audit, SkipTrue: uint8(len(compat))}) // → native
		prog = append(prog, compat...)
	} else {
		// Another arch: allowed (a blocklist of this arch's calls).
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: a.audit, SkipTrue: 1}, // → native
			bpf.RetConstant{Val: retAllow},
		)
	}
	// native
	prog = append(prog, bpf.LoadAbsolute{Off: seccompNrOff, Size: 4})
	if a.x32 != 0 {
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: a.x32, SkipFalse: 1},
			bpf.RetConstant{Val: retNoSys},
		)
	}
	prog = append(prog, refuse(a.trace)...)
	prog = append(prog,
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: a.ioctl, SkipTrue: 1}, // → check
		bpf.RetConstant{Val: retAllow},
	)
	prog = append(prog, check...)
	return prog
}

// nativeBigEndian reports the byte order of this machine.
func nativeBigEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 0
}

// loadSeccomp installs the terminal filter on every thread of this
// process (SECCOMP_FILTER_FLAG_TSYNC, which also sets no_new_privs on each
// of them); it is inherited across fork and execve and cannot be removed.
func loadSeccomp() error {
	a, ok := archOf(runtime.GOARCH)
	if !ok {
		return fmt.Errorf("seccomp: no terminal filter for %s", runtime.GOARCH)
	}
	raw, err := bpf.Assemble(terminalFilter(a, nativeBigEndian(), wallNoTrace.on()))
	if err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("seccomp: no_new_privs: %w", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog))); e != 0 {
		return fmt.Errorf("seccomp: loading the filter: %w", e)
	}
	runtime.KeepAlive(filter)
	return nil
}

// SeccompSupported reports whether the kernel can load a seccomp filter:
// strict mode with a flag set is refused with EINVAL where seccomp exists
// (and with ENOSYS, or by a container's own filter, where it does not).
func SeccompSupported() bool {
	if _, ok := archOf(runtime.GOARCH); !ok {
		return false
	}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_STRICT, 1, 0)
	return errors.Is(e, unix.EINVAL)
}
