//go:build linux

package sandbox

import (
	"encoding/binary"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// TestTerminalFilter runs the seccomp program in a BPF interpreter on
// hand-made seccomp_data, for each way an ioctl can reach the kernel on
// x86-64 and arm64: native, the x32 ABI, the 32-bit compat ABI (int 0x80,
// which the library filter used before let through unchecked), and a
// command number with high bits set.
func TestTerminalFilter(t *testing.T) {
	if a, ok := archOf(runtime.GOARCH); !ok || a.ioctl != unix.SYS_IOCTL ||
		!slices.Equal(a.trace, []uint32{unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV}) {
		t.Fatalf("archOf(%s) = %+v, %v; the native ioctl is %d, ptrace and process_vm_* %d %d %d", runtime.GOARCH, a, ok,
			unix.SYS_IOCTL, unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV)
	}
	const tiocsti, tioclinux, tiocgwinsz = 0x5412, 0x541c, 0x5413
	type call struct {
		name     string
		arch, nr uint32
		cmd      uint64
		want     uint32
	}
	for _, c := range []struct {
		goarch string
		calls  []call
	}{
		{"amd64", []call{
			{"TIOCSTI", unix.AUDIT_ARCH_X86_64, 16, tiocsti, retEPERM},
			{"TIOCLINUX", unix.AUDIT_ARCH_X86_64, 16, tioclinux, retEPERM},
			{"TIOCSTI high bits", unix.AUDIT_ARCH_X86_64, 16, 1<<32 | tiocsti, retEPERM},
			{"any high bit", unix.AUDIT_ARCH_X86_64, 16, 1 << 63, retEPERM},
			{"TIOCGWINSZ", unix.AUDIT_ARCH_X86_64, 16, tiocgwinsz, retAllow},
			{"write", unix.AUDIT_ARCH_X86_64, 1, tiocsti, retAllow},
			{"x32 ioctl", unix.AUDIT_ARCH_X86_64, 0x40000000 | 514, tiocsti, retNoSys},
			{"i386 TIOCSTI", unix.AUDIT_ARCH_I386, 54, tiocsti, retEPERM},
			{"i386 TIOCGWINSZ", unix.AUDIT_ARCH_I386, 54, tiocgwinsz, retAllow},
			{"i386 other call", unix.AUDIT_ARCH_I386, 16, tiocsti, retAllow},
			{"another arch", unix.AUDIT_ARCH_AARCH64, 16, tiocsti, retAllow},
			{"ptrace", unix.AUDIT_ARCH_X86_64, 101, 0, retEPERM},
			{"process_vm_readv", unix.AUDIT_ARCH_X86_64, 310, 0, retEPERM},
			{"process_vm_writev", unix.AUDIT_ARCH_X86_64, 311, 0, retEPERM},
			{"x32 ptrace", unix.AUDIT_ARCH_X86_64, 0x40000000 | 521, 0, retNoSys},
			{"i386 ptrace", unix.AUDIT_ARCH_I386, 26, 0, retEPERM},
			{"i386 process_vm_readv", unix.AUDIT_ARCH_I386, 347, 0, retEPERM},
			{"i386 process_vm_writev", unix.AUDIT_ARCH_I386, 348, 0, retEPERM},
			{"getpid", unix.AUDIT_ARCH_X86_64, 39, 0, retAllow},
			{"i386 getpid", unix.AUDIT_ARCH_I386, 20, 0, retAllow},
		}},
		{"arm64", []call{
			{"TIOCSTI", unix.AUDIT_ARCH_AARCH64, 29, tiocsti, retEPERM},
			{"TIOCSTI high bits", unix.AUDIT_ARCH_AARCH64, 29, 1<<40 | tiocsti, retEPERM},
			{"TIOCGWINSZ", unix.AUDIT_ARCH_AARCH64, 29, tiocgwinsz, retAllow},
			{"high nr", unix.AUDIT_ARCH_AARCH64, 0x40000000 | 29, tiocsti, retAllow},
			{"arm TIOCLINUX", unix.AUDIT_ARCH_ARM, 54, tioclinux, retEPERM},
			{"arm other call", unix.AUDIT_ARCH_ARM, 29, tiocsti, retAllow},
			{"ptrace", unix.AUDIT_ARCH_AARCH64, 117, 0, retEPERM},
			{"process_vm_readv", unix.AUDIT_ARCH_AARCH64, 270, 0, retEPERM},
			{"process_vm_writev", unix.AUDIT_ARCH_AARCH64, 271, 0, retEPERM},
			{"arm ptrace", unix.AUDIT_ARCH_ARM, 26, 0, retEPERM},
			{"arm process_vm_readv", unix.AUDIT_ARCH_ARM, 376, 0, retEPERM},
			{"arm process_vm_writev", unix.AUDIT_ARCH_ARM, 377, 0, retEPERM},
			{"getpid", unix.AUDIT_ARCH_AARCH64, 172, 0, retAllow},
		}},
		{"riscv64", []call{
			{"TIOCSTI", unix.AUDIT_ARCH_RISCV64, 29, tiocsti, retEPERM},
			{"TIOCGWINSZ", unix.AUDIT_ARCH_RISCV64, 29, tiocgwinsz, retAllow},
			{"another arch", unix.AUDIT_ARCH_X86_64, 29, tiocsti, retAllow},
			{"ptrace", unix.AUDIT_ARCH_RISCV64, 117, 0, retEPERM},
			{"process_vm_writev", unix.AUDIT_ARCH_RISCV64, 271, 0, retEPERM},
		}},
	} {
		a, ok := archOf(c.goarch)
		if !ok {
			t.Fatalf("no filter for %s", c.goarch)
		}
		vm, err := bpf.NewVM(terminalFilter(a, false, true))
		if err != nil {
			t.Fatalf("%s: %v", c.goarch, err)
		}
		// The mutation check's filter (wall no-trace off) still holds the
		// terminal and lets the tracing calls through.
		vmTrace, err := bpf.NewVM(terminalFilter(a, false, false))
		if err != nil {
			t.Fatalf("%s: %v", c.goarch, err)
		}
		for _, call := range c.calls {
			// struct seccomp_data of a little-endian machine. The
			// interpreter loads words in network order (seccomp in the
			// machine's), so each word is stored big-endian here.
			data := make([]byte, 64)
			binary.BigEndian.PutUint32(data[seccompNrOff:], call.nr)
			binary.BigEndian.PutUint32(data[seccompArchOff:], call.arch)
			binary.BigEndian.PutUint32(data[seccompArg1Off:], uint32(call.cmd))
			binary.BigEndian.PutUint32(data[seccompArg1Off+4:], uint32(call.cmd>>32))
			got, err := vm.Run(data)
			if err != nil {
				t.Fatalf("%s %s: %v", c.goarch, call.name, err)
			}
			if uint32(got) != call.want {
				t.Errorf("%s %s: got %#x, want %#x", c.goarch, call.name, got, call.want)
			}
			want := call.want
			if strings.Contains(call.name, "ptrace") || strings.Contains(call.name, "process_vm") {
				if want == retEPERM {
					want = retAllow
				}
			}
			if got, err := vmTrace.Run(data); err != nil || uint32(got) != want {
				t.Errorf("%s %s without no-trace: got %#x (%v), want %#x", c.goarch, call.name, got, err, want)
			}
		}
	}
}
