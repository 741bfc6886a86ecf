//go:build linux

#include "textflag.h"

// The container's init (see tinyinit.go for what it does and why it is
// written here). It runs as its own static executable, never inside
// reins: reins only copies these bytes out of its text (code_amd64.go).
// Linux x86-64 system calls: number in AX, arguments in DI, SI, DX, R10;
// the kernel clobbers CX and R11.
//
// Registers kept: R12 the initial stack (argc, argv, envp), R14 the
// program's pid, R13 the process cap, BX the cap's message, R15 the frame:
//   0(R15)   the signal set (8 bytes)
//   8(R15)   wait4's status
//   16(R15)  rt_sigtimedwait's timeout (50 ms)
//   32(R15)  its siginfo (128 bytes)
//   160(R15) one byte for descriptor 3 (and the name, before)
//   176(R15) an empty signal set (the program's)
//   192(R15) a pipe (two 4-byte descriptors): the program waits on it
//            until this init has blanked its command line
//   256(R15) getdents64's buffer, 8192 bytes

// func start() *byte
TEXT ·start(SB), NOSPLIT, $0-8
	LEAQ tinyinit<>(SB), AX
	MOVQ AX, ret+0(FP)
	RET

TEXT tinyinit<>(SB), NOSPLIT|NOFRAME, $0
	MOVQ SP, R12
	// Not dumpable: nobody in the container may trace pid 1 or read its
	// memory (prctl(PR_SET_DUMPABLE, 0)).
	MOVQ $157, AX
	MOVQ $4, DI
	XORQ SI, SI
	SYSCALL
	// SIGKILL when the parent dies (prctl(PR_SET_PDEATHSIG, SIGKILL)).
	MOVQ $157, AX
	MOVQ $1, DI
	MOVQ $9, SI
	SYSCALL
	// Seven arguments at least (tinyinit.go).
	MOVQ 0(R12), AX
	CMPQ AX, $7
	JLT bad
	// R13 = the process cap (argv[2]).
	MOVQ 24(R12), SI
	XORQ R13, R13
max:
	MOVBQZX (SI), AX
	TESTQ AX, AX
	JEQ maxdone
	SUBQ $48, AX
	LEAQ (R13)(R13*4), R13
	SHLQ $1, R13
	ADDQ AX, R13
	INCQ SI
	JMP max
maxdone:
	MOVQ 32(R12), BX
	SUBQ $8448, SP
	MOVQ SP, R15
	// Named for ps, not after its descriptor: prctl(PR_SET_NAME,
	// "reins-init").
	MOVQ $0x6e692d736e696572, AX
	MOVQ AX, 160(R15)
	MOVQ $0x7469, AX
	MOVQ AX, 168(R15)
	MOVQ $157, AX
	MOVQ $15, DI
	LEAQ 160(R15), SI
	SYSCALL
	// The signals taken synchronously: HUP, INT, QUIT, TERM, CHLD (bit
	// n-1 for signal n). Blocked already by whoever exec'd this; blocked
	// again in case.
	MOVQ $0x14007, AX
	MOVQ AX, 0(R15)
	MOVQ $0, 16(R15)
	MOVQ $50000000, 24(R15)
	MOVQ $14, AX // rt_sigprocmask(SIG_BLOCK, set, NULL, 8)
	XORQ DI, DI
	MOVQ R15, SI
	XORQ DX, DX
	MOVQ $8, R10
	SYSCALL

	// pipe2(&fds, O_CLOEXEC): the program starts only once its command
	// line is blanked here (below), never readable in /proc/1/cmdline.
	MOVQ $293, AX
	LEAQ 192(R15), DI
	MOVQ $0x80000, SI
	SYSCALL
	TESTQ AX, AX
	JNE bad
	// The program, a child of this init started with the signals above
	// already blocked here: none sent from now on is lost.
	MOVQ $57, AX // fork
	SYSCALL
	TESTQ AX, AX
	JEQ child
	JLT bad
	MOVQ AX, R14
	// This init keeps no copy of the program's stdin and stdout, so its
	// reader sees their end when the program's side closes.
	MOVQ $3, AX // close(0)
	XORQ DI, DI
	SYSCALL
	MOVQ $3, AX // close(1)
	MOVQ $1, DI
	SYSCALL
	// Blank the program's command line (argv[5] on) in this init's own
	// arguments: /proc/1/cmdline shows reins __reins-confine, the cap and
	// its line only.
	LEAQ 48(R12), CX
blank:
	MOVQ (CX), SI
	TESTQ SI, SI
	JEQ blankdone
blankstr:
	CMPB (SI), $0
	JEQ blanknext
	MOVB $0, (SI)
	INCQ SI
	JMP blankstr
blanknext:
	ADDQ $8, CX
	JMP blank
blankdone:
	// Both ends of the pipe closed: the program's read ends.
	MOVQ $3, AX
	MOVLQSX 196(R15), DI
	SYSCALL
	MOVQ $3, AX
	MOVLQSX 192(R15), DI
	SYSCALL
	JMP reap

child:
	// The program: no signal blocked, a session of its own (no
	// controlling terminal), descriptors 3 and 4 closed, then
	// execve(argv[5], &argv[6], envp).
	// Wait until the init has blanked the command line: read(fds[0])
	// returns at its close (fds[1] closed here first).
	MOVQ $3, AX
	MOVLQSX 196(R15), DI
	SYSCALL
	XORQ AX, AX
	MOVLQSX 192(R15), DI
	LEAQ 160(R15), SI
	MOVQ $1, DX
	SYSCALL
	MOVQ $0, 176(R15)
	MOVQ $14, AX // rt_sigprocmask(SIG_SETMASK, empty, NULL, 8)
	MOVQ $2, DI
	LEAQ 176(R15), SI
	XORQ DX, DX
	MOVQ $8, R10
	SYSCALL
	MOVQ $112, AX // setsid
	SYSCALL
	MOVQ $3, AX // close(3)
	MOVQ $3, DI
	SYSCALL
	MOVQ $3, AX // close(4)
	MOVQ $4, DI
	SYSCALL
	MOVQ 0(R12), AX // envp = &argv[argc+1]
	LEAQ 16(R12)(AX*8), DX
	MOVQ 48(R12), DI
	LEAQ 56(R12), SI
	MOVQ $59, AX // execve
	SYSCALL
	// It failed: argv[4] on descriptor 2, then 127 for a missing program,
	// 126 for any other reason, as a shell says.
	MOVQ AX, R8
	MOVQ 40(R12), BX
	MOVQ BX, DX
startmsglen:
	CMPB (DX), $0
	JEQ startmsgend
	INCQ DX
	JMP startmsglen
startmsgend:
	SUBQ BX, DX
	MOVQ $1, AX
	MOVQ $2, DI
	MOVQ BX, SI
	SYSCALL
	MOVQ $126, DI
	CMPQ R8, $-2 // ENOENT
	JNE childexit
	MOVQ $127, DI
childexit:
	MOVQ $231, AX
	SYSCALL

reap:
	// wait4(-1, &status, WNOHANG, NULL) until nothing is left to reap.
	MOVQ $61, AX
	MOVQ $-1, DI
	LEAQ 8(R15), SI
	MOVQ $1, DX
	XORQ R10, R10
	SYSCALL
	CMPQ AX, $-10 // ECHILD: the program is gone and was never seen
	JEQ bad
	CMPQ AX, $0
	JLE wait
	CMPQ AX, R14
	JEQ done
	JMP reap

wait:
	// rt_sigtimedwait(set, &info, timeout or NULL, 8)
	MOVQ $128, AX
	MOVQ R15, DI
	LEAQ 32(R15), SI
	XORQ DX, DX
	TESTQ R13, R13
	JEQ forever
	LEAQ 16(R15), DX
forever:
	MOVQ $8, R10
	SYSCALL
	CMPQ AX, $17 // SIGCHLD
	JEQ reap
	CMPQ AX, $0
	JLE count
	// Any other: forwarded to the program's group, kill(-pid, sig).
	MOVQ AX, SI
	MOVQ R14, DI
	NEGQ DI
	MOVQ $62, AX
	SYSCALL
	JMP reap

count:
	TESTQ R13, R13
	JEQ reap
	// lseek(4, 0, SEEK_SET), then getdents64 to the end, counting the
	// names that start with 1-9 (R8).
	MOVQ $8, AX
	MOVQ $4, DI
	XORQ SI, SI
	XORQ DX, DX
	SYSCALL
	TESTQ AX, AX
	JNE reap
	XORQ R8, R8
dents:
	MOVQ $217, AX
	MOVQ $4, DI
	LEAQ 256(R15), SI
	MOVQ $8192, DX
	SYSCALL
	CMPQ AX, $0
	JLT reap
	JEQ counted
	MOVQ AX, R9
	XORQ R10, R10
entry:
	// struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name.
	LEAQ 19(R10), DX
	CMPQ DX, R9
	JGE dents
	LEAQ 256(R15)(R10*1), SI
	MOVWQZX 16(SI), DX
	TESTQ DX, DX
	JEQ reap
	MOVBQZX 19(SI), AX
	CMPQ AX, $49 // '1'
	JLT next
	CMPQ AX, $57 // '9'
	JGT next
	INCQ R8
next:
	ADDQ DX, R10
	JMP entry
counted:
	DECQ R8 // this init is one of them
	CMPQ R8, R13
	JLE reap
	// Past the cap: kill(-1, SIGKILL), the message on 2, SIGKILL on 3.
	MOVQ $62, AX
	MOVQ $-1, DI
	MOVQ $9, SI
	SYSCALL
	MOVQ BX, DX
msglen:
	CMPB (DX), $0
	JEQ msgend
	INCQ DX
	JMP msglen
msgend:
	SUBQ BX, DX
	MOVQ $1, AX
	MOVQ $2, DI
	MOVQ BX, SI
	SYSCALL
	MOVQ $9, R8
	JMP signalled

done:
	MOVL 8(R15), AX
	MOVL AX, R8
	ANDL $0x7f, R8
	JEQ exited
	CMPL R8, $0x7f // stopped: not asked for, not an end
	JEQ reap
signalled:
	// The signal R8 on descriptor 3, then end with 128+signal.
	MOVB R8, 160(R15)
	MOVQ $1, AX
	MOVQ $3, DI
	LEAQ 160(R15), SI
	MOVQ $1, DX
	SYSCALL
	LEAQ 128(R8), DI
	MOVQ $231, AX // exit_group
	SYSCALL
exited:
	MOVL 8(R15), DI
	SHRL $8, DI
	ANDL $0xff, DI
	MOVQ $231, AX
	SYSCALL
bad:
	MOVQ $125, DI
	MOVQ $231, AX
	SYSCALL
	// The marker (tinyinit.go): ud2, then "reins\0".
	BYTE $0x0f; BYTE $0x0b; BYTE $0x72; BYTE $0x65
	BYTE $0x69; BYTE $0x6e; BYTE $0x73; BYTE $0x00
