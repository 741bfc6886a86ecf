// Package tinyinit is the container's init as a static executable of a
// few hundred bytes, for the sandbox to run as pid 1 of a confined
// process's PID namespace once the confine stage has set the container up
// and started the program; and the supervisor's watch, its counterpart
// outside the container (watch.go).
//
// Why not the confine stage itself, as before: it is reins re-executed, a
// Go program, and a Go process that only waits costs about 1 MiB of
// private memory however little it does (its heap arena, its threads'
// stacks, the data every package's init touches) — per confined child,
// beside a `sleep` of 0.12 MiB (BENCHMARKS.md, "Issue 47: the container's
// memory"). This init is machine code with no runtime: it touches one page
// of code and three of stack.
//
// Why not C: reins is built by `go build` alone, with no C toolchain and
// no binary in the repository. The code is written in the Go assembler
// (tinyinit_amd64.s), linked into reins as an ordinary text symbol, and
// Image copies those bytes out of reins's own text into an ELF file around
// them. The code is position-independent (relative jumps only, no data but
// its stack and its arguments), so it runs wherever the ELF loads it.
//
// What it does (the duties of the Go init it replaces, supervise.go's
// initProgram):
//
//   - it names itself reins-init, makes itself undumpable (execve made it
//     dumpable again) and asks for SIGKILL when its parent dies;
//   - it takes SIGHUP, SIGINT, SIGQUIT, SIGTERM and SIGCHLD synchronously
//     (blocked, then rt_sigtimedwait: the caller execs it with them
//     already blocked, so that none sent in between is lost — to the init
//     of a namespace, an unblocked signal without a handler is dropped);
//   - it starts the program itself (fork, then in the child: no signal
//     blocked, setsid, descriptors 3 and 4 closed, execve), so there is no
//     moment at which the program runs and a signal meant for it could
//     land in a process about to be replaced; it closes its own stdin and
//     stdout and blanks the program's command line in its own arguments
//     before the program runs (the program waits on a pipe until then);
//   - it forwards the first four signals to the program's process group;
//   - it reaps every child; when the program ends it ends the same way: its
//     exit status, or for a program killed by a signal the signal's number
//     written as one byte on descriptor 3 and 128+signal as its status (an
//     init cannot die by its own signal);
//   - with a process cap, every 50 ms it counts the numeric entries of the
//     /proc held open on descriptor 4; past the cap it kills every process
//     of the namespace, writes its message to descriptor 2, reports SIGKILL
//     and ends.
//
// Its arguments: argv[2] the process cap (decimal, 0 for none), argv[3]
// the line to write past the cap, argv[4] the line to write when the
// program cannot be started (then 127 for a missing program, 126 for any
// other reason), argv[5] the program's path, argv[6] on its arguments
// (its argv[0] first). argv[0] and argv[1] are names for ps. Its
// environment is the program's.
package tinyinit

import "encoding/binary"

// The ELF file's layout: one header, two program headers (the code,
// loaded read and execute; a non-executable stack), then the code.
const (
	base     = 0x400000 // where the file is loaded (above mmap_min_addr)
	ehdrSize = 64
	phdrSize = 56
	codeOff  = ehdrSize + 2*phdrSize
)

// Image is the init as a static ELF executable for this machine, or nil
// where there is none (another architecture, or code that could not be
// found): the caller then runs its own init.
func Image() []byte {
	c := code()
	if c == nil {
		return nil
	}
	return wrap(c, machine)
}

// wrap puts code in an ELF file for the machine m whose entry point is
// the code's first byte.
func wrap(code []byte, m uint16) []byte {
	b := make([]byte, codeOff+len(code))
	le := binary.LittleEndian
	copy(b, "\x7fELF")
	b[4] = 2                // 64-bit
	b[5] = 1                // little-endian
	b[6] = 1                // ELF version 1
	le.PutUint16(b[16:], 2) // ET_EXEC
	le.PutUint16(b[18:], m)
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[24:], base+codeOff) // entry
	le.PutUint64(b[32:], ehdrSize)     // program headers
	le.PutUint16(b[52:], ehdrSize)
	le.PutUint16(b[54:], phdrSize)
	le.PutUint16(b[56:], 2)
	p := b[ehdrSize:]
	le.PutUint32(p[0:], 1) // PT_LOAD
	le.PutUint32(p[4:], 5) // read, execute
	le.PutUint64(p[16:], base)
	le.PutUint64(p[24:], base)
	le.PutUint64(p[32:], uint64(len(b)))
	le.PutUint64(p[40:], uint64(len(b)))
	le.PutUint64(p[48:], 0x1000)
	p = b[ehdrSize+phdrSize:]
	le.PutUint32(p[0:], 0x6474e551) // PT_GNU_STACK
	le.PutUint32(p[4:], 6)          // read, write: not executable
	le.PutUint64(p[48:], 16)
	copy(b[codeOff:], code)
	return b
}

// marker ends the code in the text (tinyinit_*.s): code copies up to it.
// Eight bytes that are no instruction sequence the code uses.
var marker = [8]byte{0x0f, 0x0b, 'r', 'e', 'i', 'n', 's', 0x00}

// maxCode bounds the search for the marker.
const maxCode = 4096
