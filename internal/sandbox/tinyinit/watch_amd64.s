//go:build linux

#include "textflag.h"

// The supervisor's watch (see watch.go for what it does and why it is
// written here), built as the init is (tinyinit_amd64.s): its own static
// executable, copied out of reins's text, position-independent.
//
// Registers kept: R12 the initial stack (argc, argv, envp), R14 the
// watched child's pid, R13 an index into argv, R8 the child's signal,
// R9 its exit status. R15 the frame:
//   0(R15)   the signal set (8 bytes)
//   8(R15)   wait4's status
//   16(R15)  rt_sigtimedwait's timeout (100 ms)
//   32(R15)  its siginfo (128 bytes)
//   160(R15) one byte (the start byte, the report; the name before)
//   168(R15) clock_gettime's now (seconds, nanoseconds)
//   184(R15) the end of the grace (seconds, nanoseconds; 0: none yet)
//   200(R15) argv[2..6] as numbers: pid, grace in ms, reins's pid, the
//            report's descriptor, the start descriptor
//   240(R15) an empty signal set
//   256(R15) newfstatat's buffer (144 bytes)
//   400(R15) a struct sigaction (32 bytes): SIG_IGN, then SIG_DFL

// func watchStart() *byte
TEXT ·watchStart(SB), NOSPLIT, $0-8
	LEAQ tinywatch<>(SB), AX
	MOVQ AX, ret+0(FP)
	RET

TEXT tinywatch<>(SB), NOSPLIT|NOFRAME, $0
	MOVQ SP, R12
	// Eleven arguments at least (watch.go).
	MOVQ 0(R12), AX
	CMPQ AX, $11
	JLT wbad
	SUBQ $512, SP
	MOVQ SP, R15
	// argv[2] to argv[6], decimal, to 200(R15) on.
	MOVQ $2, R13
wnum:
	MOVQ 8(R12)(R13*8), SI
	XORQ DX, DX
wdigit:
	MOVBQZX (SI), AX
	TESTQ AX, AX
	JEQ wnumdone
	SUBQ $48, AX
	LEAQ (DX)(DX*4), DX
	SHLQ $1, DX
	ADDQ AX, DX
	INCQ SI
	JMP wdigit
wnumdone:
	MOVQ DX, 184(R15)(R13*8)
	INCQ R13
	CMPQ R13, $7
	JLT wnum
	MOVQ 200(R15), R14
	// Named for ps: prctl(PR_SET_NAME, "reins-watch").
	MOVQ $0x61772d736e696572, AX
	MOVQ AX, 160(R15)
	MOVQ $0x686374, AX
	MOVQ AX, 168(R15)
	MOVQ $157, AX
	MOVQ $15, DI
	LEAQ 160(R15), SI
	SYSCALL
	// The signals taken synchronously: HUP, INT, QUIT, USR2 (reins
	// died: the parent-death signal), TERM, CHLD. Blocked already by
	// whoever exec'd this; blocked again in case.
	MOVQ $0x14807, AX
	MOVQ AX, 0(R15)
	MOVQ $0, 16(R15)
	MOVQ $100000000, 24(R15)
	MOVQ $0, 184(R15)
	MOVQ $0, 192(R15)
	MOVQ $0, 240(R15)
	MOVQ $14, AX // rt_sigprocmask(SIG_BLOCK, set, NULL, 8)
	XORQ DI, DI
	MOVQ R15, SI
	XORQ DX, DX
	MOVQ $8, R10
	SYSCALL
	// SIGPIPE ignored: the start byte's reader may be gone (a stage that
	// failed), and the write must fail, not end this process.
	MOVQ $1, 400(R15) // SIG_IGN
	MOVQ $0, 408(R15)
	MOVQ $0, 416(R15)
	MOVQ $0, 424(R15)
	MOVQ $13, AX // rt_sigaction(SIGPIPE, &act, NULL, 8)
	MOVQ $13, DI
	LEAQ 400(R15), SI
	XORQ DX, DX
	MOVQ $8, R10
	SYSCALL
	// The program may start now (it waits for this byte): nothing sent
	// to this process from here on is lost.
	MOVB $103, 160(R15)
	MOVQ $1, AX
	MOVQ 232(R15), DI
	LEAQ 160(R15), SI
	MOVQ $1, DX
	SYSCALL
	MOVQ $3, AX
	MOVQ 232(R15), DI
	SYSCALL

wloop:
	// wait4(pid, &status, WNOHANG, NULL)
	MOVQ $61, AX
	MOVQ R14, DI
	LEAQ 8(R15), SI
	MOVQ $1, DX
	XORQ R10, R10
	SYSCALL
	CMPQ AX, R14
	JEQ wdone
	CMPQ AX, $-10 // ECHILD: never ours, or gone unseen
	JEQ wbad
	// Reins is gone when this process's parent is no longer reins.
	MOVQ $110, AX // getppid
	SYSCALL
	CMPQ AX, 216(R15)
	JNE wparent
	// Past the grace: SIGKILL.
	MOVQ 184(R15), AX
	TESTQ AX, AX
	JEQ wwait
	MOVQ $228, AX // clock_gettime(CLOCK_MONOTONIC, &now)
	MOVQ $1, DI
	LEAQ 168(R15), SI
	SYSCALL
	MOVQ 168(R15), AX
	CMPQ AX, 184(R15)
	JGT wkill
	JLT wwait
	MOVQ 176(R15), AX
	CMPQ AX, 192(R15)
	JLT wwait
wkill:
	MOVQ $62, AX // kill(pid, SIGKILL)
	MOVQ R14, DI
	MOVQ $9, SI
	SYSCALL
	JMP wwait

wparent:
	// Nothing may outlive reins: SIGKILL, then wait for the end.
	MOVQ $62, AX
	MOVQ R14, DI
	MOVQ $9, SI
	SYSCALL
	MOVQ $61, AX // wait4(pid, &status, 0, NULL)
	MOVQ R14, DI
	LEAQ 8(R15), SI
	XORQ DX, DX
	XORQ R10, R10
	SYSCALL
	CMPQ AX, R14
	JEQ wdone
	JMP wbad

wwait:
	// rt_sigtimedwait(set, &info, 100 ms, 8)
	MOVQ $128, AX
	MOVQ R15, DI
	LEAQ 32(R15), SI
	LEAQ 16(R15), DX
	MOVQ $8, R10
	SYSCALL
	CMPQ AX, $0
	JLE wloop // the timeout
	CMPQ AX, $17 // SIGCHLD
	JEQ wloop
	CMPQ AX, $12 // SIGUSR2: looked at in the loop
	JEQ wloop
	// HUP, INT, QUIT, TERM: forwarded to the child, kill(pid, sig); the
	// first starts the grace.
	MOVQ AX, SI
	MOVQ R14, DI
	MOVQ $62, AX
	SYSCALL
	MOVQ 184(R15), AX
	TESTQ AX, AX
	JNE wloop
	MOVQ $228, AX
	MOVQ $1, DI
	LEAQ 168(R15), SI
	SYSCALL
	MOVQ 208(R15), AX // the grace in ms: seconds in AX, ms in DX
	XORQ DX, DX
	MOVQ $1000, CX
	DIVQ CX
	ADDQ 168(R15), AX
	IMULQ $1000000, DX
	ADDQ 176(R15), DX
	CMPQ DX, $1000000000
	JLT wset
	SUBQ $1000000000, DX
	INCQ AX
wset:
	MOVQ AX, 184(R15)
	MOVQ DX, 192(R15)
	JMP wloop

wdone:
	// R8: the signal that ended the child, or the one the init reported
	// on the report descriptor (an init cannot die by its own); R9: the
	// exit status otherwise.
	MOVL 8(R15), AX
	MOVL AX, R8
	ANDL $0x7f, R8
	MOVL AX, R9
	SHRL $8, R9
	ANDL $0xff, R9
	TESTQ R8, R8
	JNE wclean
	MOVQ $0, AX // read(report, &b, 1)
	MOVQ 224(R15), DI
	LEAQ 160(R15), SI
	MOVQ $1, DX
	SYSCALL
	CMPQ AX, $1
	JNE wclean
	MOVBQZX 160(R15), R8

wclean:
	// A protected path that was missing (argv[11] on) and exists now:
	// reins's own code removes it (the cleanup, argv[7] run with
	// argv[8] on), in a child this process waits for.
	MOVQ $11, R13
wstat:
	CMPQ R13, 0(R12)
	JGE wend
	MOVQ $262, AX // newfstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW)
	MOVQ $-100, DI
	MOVQ 8(R12)(R13*8), SI
	LEAQ 256(R15), DX
	MOVQ $0x100, R10
	SYSCALL
	TESTQ AX, AX
	JEQ wafter
	INCQ R13
	JMP wstat
wafter:
	MOVQ $57, AX // fork
	SYSCALL
	TESTQ AX, AX
	JEQ wcleanup
	JLT wend
	MOVQ AX, DI // wait4(cleanup, &status, 0, NULL)
	MOVQ $61, AX
	LEAQ 8(R15), SI
	XORQ DX, DX
	XORQ R10, R10
	SYSCALL
	JMP wend
wcleanup:
	MOVQ 0(R12), AX // envp = &argv[argc+1]
	LEAQ 16(R12)(AX*8), DX
	MOVQ 64(R12), DI
	LEAQ 72(R12), SI
	MOVQ $59, AX // execve
	SYSCALL
	MOVQ $126, DI
	MOVQ $231, AX
	SYSCALL

wend:
	TESTQ R8, R8
	JEQ wexit
	// The faults Go's runtime keeps (SIGILL, SIGBUS, SIGFPE, SIGSEGV) end
	// as a shell reports them, 128+signal, as the Go supervisor ends.
	CMPQ R8, $4
	JEQ wcode
	CMPQ R8, $7
	JEQ wcode
	CMPQ R8, $8
	JEQ wcode
	CMPQ R8, $11
	JEQ wcode
	// Any other: end by it, so reins reports the same signal (its
	// default action back first: SIGPIPE was ignored).
	MOVQ $0, 400(R15) // SIG_DFL
	MOVQ $13, AX // rt_sigaction(sig, &act, NULL, 8)
	MOVQ R8, DI
	LEAQ 400(R15), SI
	XORQ DX, DX
	MOVQ $8, R10
	SYSCALL
	MOVQ $14, AX // rt_sigprocmask(SIG_SETMASK, empty, NULL, 8)
	MOVQ $2, DI
	LEAQ 240(R15), SI
	XORQ DX, DX
	MOVQ $8, R10
	SYSCALL
	MOVQ $39, AX // getpid
	SYSCALL
	MOVQ AX, DI
	MOVQ R8, SI
	MOVQ $62, AX
	SYSCALL
wcode:
	LEAQ 128(R8), DI
	MOVQ $231, AX // exit_group
	SYSCALL
wexit:
	MOVQ R9, DI
	MOVQ $231, AX
	SYSCALL
wbad:
	MOVQ $125, DI
	MOVQ $231, AX
	SYSCALL
	// The marker (tinyinit.go): ud2, then "reins\0".
	BYTE $0x0f; BYTE $0x0b; BYTE $0x72; BYTE $0x65
	BYTE $0x69; BYTE $0x6e; BYTE $0x73; BYTE $0x00
