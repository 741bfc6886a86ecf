package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reinsdev/reins/internal/proc"
	"golang.org/x/sys/unix"
)

// init turns any binary that links this package — reins, or a test binary
// of a package that starts processes — into the supervisor when it is run
// with the marker argument. It runs before main and before the flags of a
// test binary are parsed, and never returns in that case.
func init() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case helperArg:
			os.Exit(supervise(os.Args[2:]))
		case confineArg:
			os.Exit(confine(os.Args[2:]))
		}
	}
}

// Exit codes of the supervisor itself, when the child never ran. They
// follow the shell's conventions so callers that map 126/127 keep working.
const (
	exitSetup    = 126 // bad arguments, or the sandbox could not be applied
	exitNotFound = 127
)

const (
	// parentPoll bounds how late the supervisor notices that reins died
	// when the parent-death signal did not come (it is tied to the OS
	// thread that forked, not to the process).
	parentPoll = 100 * time.Millisecond
	// sweepBound bounds the final sweep of descendants.
	sweepBound = 5 * time.Second
	// defaultTermGrace: see Policy.TermGrace.
	defaultTermGrace = time.Second
)

func supervise(args []string) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "reins supervisor: "+format+"\n", a...)
		return code
	}
	if len(args) < 3 || args[1] != "--" {
		return fail(exitSetup, "usage: %s POLICY -- PROGRAM [ARGS...]", helperArg)
	}
	var p Policy
	if err := json.Unmarshal([]byte(args[0]), &p); err != nil {
		return fail(exitSetup, "bad policy: %v", err)
	}
	ppid := os.Getppid()
	// Orphans among the child's descendants come to us, not to init.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail(exitSetup, "cannot become a subreaper: %v", err)
	}
	// A hint that reins died; confirmed with getppid (see watchParent).
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGUSR2), 0, 0, 0)
	if os.Getppid() != ppid {
		return fail(exitSetup, "parent exited before the child started")
	}

	tmp, err := os.MkdirTemp("", "reins-sandbox-")
	if err != nil {
		return fail(exitSetup, "cannot make the private temporary directory: %v", err)
	}
	defer os.RemoveAll(tmp)

	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR2)

	// The supervisor stays outside the sandbox: the confined program cannot
	// signal it (Landlock's signal scope, ABI 6) nor ptrace it, so it cannot
	// kill its watcher and then leave a setsid daemon behind. The sandbox is
	// applied by a second stage that confines itself and execs the program.
	prog, progArgs := args[2], args[3:]
	if p.Confined() {
		self, err := self()
		if err != nil {
			return fail(exitSetup, "%v", err)
		}
		progArgs = append([]string{confineArg, args[0], tmp, "--", prog}, progArgs...)
		prog = self
	}
	cmd := exec.Command(prog, progArgs...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = withTmp(os.Environ(), tmp)
	if err := cmd.Start(); err != nil {
		code := exitSetup
		if errors.Is(err, os.ErrNotExist) {
			code = exitNotFound
		}
		return fail(code, "cannot start the program: %v", err)
	}
	// The child holds its own copies of stdin and stdout: closing ours lets
	// the reader in reins see EOF when the child's side closes.
	os.Stdin.Close()
	os.Stdout.Close()

	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()

	grace := p.TermGrace
	if grace <= 0 {
		grace = defaultTermGrace
	}
	poll := time.NewTicker(parentPoll)
	defer poll.Stop()
	var graceC <-chan time.Time
loop:
	for {
		select {
		case <-exited:
			break loop
		case s := <-sigs:
			if s == syscall.SIGUSR2 {
				if os.Getppid() != ppid {
					break loop // reins is gone: nothing may outlive it
				}
				continue
			}
			// Whoever signalled only us, the child hears it too; a group
			// signal reaches it twice, which is harmless.
			_ = cmd.Process.Signal(s)
			if graceC == nil {
				graceC = time.After(grace)
			}
		case <-graceC:
			break loop
		case <-poll.C:
			if os.Getppid() != ppid {
				break loop
			}
		}
	}
	sweep(sweepBound)
	<-exited // reaped by the sweep's kill at the latest

	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		// End as the child ended, so reins reports the same signal.
		signal.Reset()
		os.RemoveAll(tmp)
		_ = syscall.Kill(os.Getpid(), ws.Signal())
		time.Sleep(100 * time.Millisecond)
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// withTmp points the temporary-directory variables at tmp.
func withTmp(env []string, tmp string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "TMPDIR", "TMP", "TEMP":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "TMPDIR="+tmp)
}

// sweep kills every descendant of this process with SIGKILL until none is
// left. Because we are a subreaper, a descendant whose parent died was
// re-parented to us, so walking down from our own children finds them all.
// Their zombies are reaped by whoever inherits them when we exit; the
// child itself is reaped by its Wait.
func sweep(bound time.Duration) {
	deadline := time.Now().Add(bound)
	self := os.Getpid()
	for {
		// Fast path: no child at all, live or zombie (the common end of a
		// command that started nothing in the background), so no /proc walk.
		var info unix.Siginfo
		if err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil); errors.Is(err, unix.ECHILD) {
			return
		}
		tree, live := children()
		// Walk through zombies too: a multi-threaded process (node) whose
		// main thread has exited shows as a zombie while its other threads
		// still run, and its children stay its own until the last thread
		// is gone. Skipping it would lose them.
		var all []int
		seen := map[int]bool{}
		var walk func(int)
		walk = func(pid int) {
			if seen[pid] { // a snapshot of /proc taken while pids are reused
				return
			}
			seen[pid] = true
			if live[pid] {
				all = append(all, pid)
			}
			for _, c := range tree[pid] {
				walk(c)
			}
		}
		for _, k := range tree[self] {
			walk(k)
		}
		if len(all) == 0 {
			return
		}
		// Stop the tree first so nobody forks while it is being killed.
		for _, pid := range all {
			_ = syscall.Kill(pid, syscall.SIGSTOP)
		}
		for _, pid := range all {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// children maps every process to its children, from /proc, and says which
// are live (not zombies).
func children() (tree map[int][]int, live map[int]bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, nil
	}
	tree, live = map[int][]int{}, map[int]bool{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		st, ok := proc.ParseStat(string(data))
		if !ok {
			continue
		}
		tree[st.PPID] = append(tree[st.PPID], pid)
		live[pid] = st.Live()
	}
	return tree, live
}

// confineArg marks the second stage: confine this process, then become the
// program (execve keeps the Landlock domain).
const confineArg = "__reins-confine"

// confine is the second stage: args are POLICY TMP -- PROGRAM [ARGS...].
func confine(args []string) int {
	if len(args) < 4 || args[2] != "--" {
		fmt.Fprintf(os.Stderr, "reins sandbox: usage: %s POLICY TMP -- PROGRAM [ARGS...]\n", confineArg)
		return exitSetup
	}
	var p Policy
	if err := json.Unmarshal([]byte(args[0]), &p); err != nil {
		fmt.Fprintf(os.Stderr, "reins sandbox: bad policy: %v\n", err)
		return exitSetup
	}
	if err := restrict(p, args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "reins sandbox: cannot apply the sandbox: %v\n", err)
		return exitSetup
	}
	err := syscall.Exec(args[3], args[3:], os.Environ())
	fmt.Fprintf(os.Stderr, "reins sandbox: cannot start the program: %v\n", err)
	if errors.Is(err, syscall.ENOENT) {
		return exitNotFound
	}
	return exitSetup
}
