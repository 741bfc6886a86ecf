//go:build linux

package sandbox

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reinsdev/reins/internal/gitsafe"
	"github.com/reinsdev/reins/internal/netproxy"
	"github.com/reinsdev/reins/internal/sandbox/tinyinit"
	"github.com/reinsdev/reins/proc"
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
			restoreProcs(supervisorProcsEnv)
			os.Exit(supervise(os.Args[2:]))
		case confineArg:
			restoreProcs(stageProcsEnv)
			os.Exit(confine(os.Args[2:]))
		case cleanupArg:
			os.Exit(cleanup(os.Args[2:]))
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
	// Nothing reins inherited reaches the program (stage.go).
	closeInherited()
	if len(args) < 3 || args[1] != "--" {
		return fail(exitSetup, "usage: %s POLICY -- PROGRAM [ARGS...]", helperArg)
	}
	var p Policy
	if err := json.Unmarshal([]byte(args[0]), &p); err != nil {
		return fail(exitSetup, "bad policy: %v", err)
	}
	// Reins's pid, as Argv wrote it: a supervisor whose parent is already
	// another (reins died before it got here, and it was handed to init
	// or a subreaper) must not start the program, which nobody would end.
	ppid := os.Getppid()
	if p.Parent != 0 && p.Parent != ppid {
		return fail(exitSetup, "parent exited before the child started")
	}
	// Orphans among the child's descendants come to us, not to init.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail(exitSetup, "cannot become a subreaper: %v", err)
	}
	// A hint that reins died; confirmed with getppid (see watchParent).
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGUSR2), 0, 0, 0)
	if os.Getppid() != ppid {
		return fail(exitSetup, "parent exited before the child started")
	}

	// The supervisor's wait, once the confine stage runs in the container
	// (and no domain proxy needs this process): the small watch of
	// internal/sandbox/tinyinit takes this process's place (watch.go
	// there). Until then no signal handler is installed: a signal that
	// comes before the watch ends this process as it would have ended
	// the watch, and the program, which waits for the watch's start
	// byte, never ran.
	container := p.Confined() && !p.NoNamespaces && wallUserNS.on()
	var watch *os.File
	if container && !p.proxied() && !goSupervisor {
		runtime.LockOSThread() // the stage's parent-death signal is this thread's
		watch, _ = tinyinit.WatchFile()
	}
	sigs := make(chan os.Signal, 8)
	notify := func() {
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR2)
	}

	// The private temporary directory: in the container with the watch,
	// a folder of the container's own /tmp (nothing on the host to
	// remove when it ends); otherwise a folder of the host's, made here
	// and removed at the end.
	tmp := ""
	mkTmp := func() error {
		var err error
		tmp, err = os.MkdirTemp("", TempPrefix)
		return err
	}
	defer func() { removeTmp(tmp) }()
	if watch == nil {
		notify()
		if err := mkTmp(); err != nil {
			return fail(exitSetup, "cannot make the private temporary directory: %v", err)
		}
	}

	// The supervisor stays outside the sandbox: the confined program cannot
	// signal it (Landlock's signal scope, ABI 6) nor ptrace it, so it cannot
	// kill its watcher and then leave a setsid daemon behind. The sandbox is
	// applied by a second stage that confines itself and execs the program;
	// in the container (container.go) that stage is the init of the new PID
	// namespace and reports the program's end on a pipe (fd 3). The stage
	// learns the policy and the program on a descriptor (specFD, stage.go):
	// its command line is readable by every process in the container.
	prog, progArgs := args[2], args[3:]
	scrubbed := os.Environ()
	if !p.Off && wallEnv.on() {
		scrubbed = p.Env.Scrub(scrubbed)
	}
	var env []string
	setEnv := func() { env = withTmp(scrubbed, cmp.Or(tmp, privateTmp)) }
	setEnv()
	if p.proxied() {
		// The proxy runs here, outside, with the host's network; the
		// confine stage presents its socket at proxyAddr inside.
		stop, err := serveProxy(p, tmp)
		if err != nil {
			return fail(exitSetup, "cannot start the domain proxy: %v", err)
		}
		defer stop()
		env = withProxy(env)
	}
	var newProtected []string
	var gate *os.File // the start byte's pipe, written by the watch
	start := func(container bool) (*exec.Cmd, *os.File, error) {
		prog, progArgs := prog, progArgs
		var report, reportW, spec, repos, gateR *os.File
		// The workspace's walk for repositories runs here while the stage
		// starts (gitwalls.go, walkAhead).
		ws := ""
		if container && walksAhead(p) {
			ws = resolved(p.Workspace)
		}
		if p.Confined() {
			self, err := self()
			if err != nil {
				return nil, nil, err
			}
			stage := stageLandlock
			if container {
				stage = stageContainer
			}
			if ws != "" {
				if repos, err = walkAhead(ws); err != nil {
					return nil, nil, err
				}
				defer repos.Close()
			}
			if container && watch != nil {
				if gateR, gate, err = os.Pipe(); err != nil {
					return nil, nil, err
				}
				defer gateR.Close()
			}
			if spec, err = specFile(stageSpec{Policy: p, Tmp: tmp, Stage: stage, Argv: append([]string{prog}, progArgs...), Repos: repos != nil, Gate: gateR != nil}); err != nil {
				return nil, nil, err
			}
			defer spec.Close()
			progArgs = []string{confineArg}
			prog = self
		}
		cmd := exec.Command(prog, progArgs...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		cmd.Env = env
		if p.Confined() {
			cmd.Env = stageEnv(env)
		}
		if spec != nil {
			cmd.ExtraFiles = []*os.File{nil, nil, spec} // specFD
		}
		var socks *os.File
		if container {
			cmd.SysProcAttr = containerAttr(p)
			var err error
			if socks, err = openSocketList(); err != nil {
				return nil, nil, err
			}
			if report, reportW, err = os.Pipe(); err != nil {
				socks.Close()
				return nil, nil, err
			}
			cmd.ExtraFiles = []*os.File{reportW, socks, spec, repos} // fd 3, socketListFD, specFD, repoFD
			if gateR != nil {
				cmd.ExtraFiles = append(cmd.ExtraFiles, gateR) // gateFD
			}
		}
		err := cmd.Start()
		if reportW != nil {
			reportW.Close()
			socks.Close()
		}
		if err != nil && report != nil {
			report.Close()
			report = nil
		}
		return cmd, report, err
	}
	if p.Confined() && p.Mode == WorkspaceWrite && wallProtect.on() {
		newProtected = missingProtected(p)
	}
	cmd, report, err := start(container)
	if err != nil && container && nsRefused(err) {
		// The kernel refuses unprivileged namespaces here: today's Landlock
		// confinement (reins doctor and the harness say what is weaker),
		// which this process supervises itself.
		if watch != nil {
			watch.Close()
			watch = nil
			if gate != nil {
				gate.Close()
				gate = nil
			}
			notify()
			if err := mkTmp(); err != nil {
				return fail(exitSetup, "cannot make the private temporary directory: %v", err)
			}
			setEnv()
		}
		cmd, report, err = start(false)
	}
	if err != nil {
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

	grace := p.TermGrace
	if grace <= 0 {
		grace = defaultTermGrace
	}
	if watch != nil {
		exe, _ := self()
		_ = tinyinit.ExecWatch(watch, tinyinit.Watch{
			Pid: cmd.Process.Pid, Grace: grace, Parent: ppid, Report: report, Start: gate,
			Cleanup: [4]string{exe, "reins", cleanupArg, args[0]}, Missing: newProtected,
		})
		// The exec failed: this process waits itself, as without the
		// watch (a signal that came in between ended it).
		notify()
	}
	if gate != nil {
		_, _ = gate.Write([]byte{'g'})
		gate.Close()
	}

	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()

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
	removeNewProtected(p, newProtected)

	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	sig := syscall.Signal(0)
	if ws.Signaled() {
		sig = ws.Signal()
	} else if report != nil {
		var b [1]byte
		if n, _ := report.Read(b[:]); n == 1 {
			sig = syscall.Signal(b[0])
		}
	}
	if report != nil {
		report.Close()
	}
	if sig != 0 && runtimeSignal(sig) {
		// Go's runtime keeps these signals: raised here it would print
		// its own crash report and exit 2 (read by a hook's caller as
		// "block"). End as a shell reports a signalled command instead.
		removeTmp(tmp)
		return 128 + int(sig)
	}
	if sig != 0 {
		// End as the child ended, so reins reports the same signal.
		signal.Reset()
		removeTmp(tmp)
		_ = syscall.Kill(os.Getpid(), sig)
		time.Sleep(100 * time.Millisecond)
		return 128 + int(sig)
	}
	return cmd.ProcessState.ExitCode()
}

// stageProcsEnv carries the caller's GOMAXPROCS past the confine stage,
// which runs with GOMAXPROCS=1: "1:" and the value when it was set, "0"
// when it was not.
const stageProcsEnv = "REINS_STAGE_GOMAXPROCS"

// stageEnv is env for the confine stage: GOMAXPROCS=1, so that the
// runtime of the container's init starts with one P and the few threads
// and stacks that need (0.2 MiB less PSS for each confined child, issue
// 47, BENCHMARKS.md: "Issue 47: the container's memory"; set in-process
// later, the resize cost more than it saved), and the caller's value in
// stageProcsEnv for restoreProcs.
func stageEnv(env []string) []string { return oneP(env, stageProcsEnv) }

// supervisorProcsEnv is stageProcsEnv for the supervisor: Command starts
// it with GOMAXPROCS=1 too when the caller leaves the environment to it
// (bash and background bash, which start nearly every confined process);
// another 0.2 MiB less PSS for each confined child and each unconfined
// one (BENCHMARKS.md: "Issue 47: the container's memory"). The supervisor
// needs no second P: it waits, and its one walk (walkAhead) runs beside
// the stage, a process of its own.
const supervisorProcsEnv = "REINS_SUPERVISOR_GOMAXPROCS"

// supervisorEnv is the environment Command gives the supervisor: reins's
// own with GOMAXPROCS=1 (see supervisorProcsEnv).
func supervisorEnv() []string { return oneP(os.Environ(), supervisorProcsEnv) }

// oneP is env with GOMAXPROCS=1 and the caller's value in marker ("1:"
// and the value when it was set, "0" when it was not), for restoreProcs.
func oneP(env []string, marker string) []string {
	out := make([]string, 0, len(env)+2)
	orig := "0"
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "GOMAXPROCS":
			orig = "1:" + v
			continue
		case marker:
			continue
		}
		out = append(out, kv)
	}
	return append(out, "GOMAXPROCS=1", marker+"="+orig)
}

// restoreProcs gives the program the environment the caller had (see
// oneP): this stage's runtime has read GOMAXPROCS already, and the next
// process's environment is built from this one's. A marker that comes
// with a GOMAXPROCS other than oneP's 1 was not set by oneP (the caller
// set the environment itself, with a stray marker in it): it is dropped
// and the caller's GOMAXPROCS kept.
func restoreProcs(marker string) {
	v, ok := os.LookupEnv(marker)
	if !ok {
		return
	}
	os.Unsetenv(marker)
	if os.Getenv("GOMAXPROCS") != "1" {
		return
	}
	if orig, set := strings.CutPrefix(v, "1:"); set {
		os.Setenv("GOMAXPROCS", orig)
	} else {
		os.Unsetenv("GOMAXPROCS")
	}
}

// nsRefused reports whether starting in new namespaces failed because the
// kernel or its settings refuse them to this user (not because the program
// is missing).
func nsRefused(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) ||
		errors.Is(err, syscall.EUSERS) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.ENOSYS)
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

// The confine stage's kinds: Landlock only, or the container first.
const (
	stageLandlock  = "landlock"
	stageContainer = "container"
)

// confine is the second stage. It takes no arguments: the policy, the
// private temporary directory, the stage and the program come on specFD
// (stage.go).
func confine(args []string) int {
	if len(args) != 0 {
		fmt.Fprintf(os.Stderr, "reins sandbox: usage: %s (the rest on descriptor %d)\n", confineArg, specFD)
		return exitSetup
	}
	spec, err := readSpec()
	if err != nil {
		fmt.Fprintf(os.Stderr, "reins sandbox: bad policy: %v\n", err)
		return exitSetup
	}
	closeInherited()
	p, tmp, container, argv := spec.Policy, spec.Tmp, spec.Stage == stageContainer, spec.Argv
	var v view
	if container {
		unix.CloseOnExec(3)
		socks, err := readSocketList()
		if err != nil {
			fmt.Fprintf(os.Stderr, "reins sandbox: cannot read the host's Unix sockets: %v\n", err)
			return exitSetup
		}
		var walked func(string) ([]gitsafe.Repo, bool)
		read := false
		if spec.Repos {
			walked = func(ws string) ([]gitsafe.Repo, bool) {
				read = true
				return walkedRepos(repoFD, ws)
			}
		}
		v, err = buildView(p, tmp, argv, socks, walked)
		if spec.Repos && !read {
			unix.Close(repoFD)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "reins sandbox: cannot build the container: %v\n", err)
			return exitSetup
		}
		if err := dropCaps(); err != nil {
			fmt.Fprintf(os.Stderr, "reins sandbox: cannot drop capabilities: %v\n", err)
			return exitSetup
		}
	}
	if !container && wallCaps.on() {
		// The fallback run by root (a CI container, a VM's root shell):
		// the confined program would get every capability back at its
		// execve — CAP_SYS_PTRACE reads any /proc/PID/environ, reins's
		// included, CAP_LINUX_IMMUTABLE runs chattr outside. An empty
		// bounding set makes the execve grant none. Any other user has
		// nothing to drop (and may not touch the bounding set).
		if err := dropCapsIfAny(); err != nil {
			fmt.Fprintf(os.Stderr, "reins sandbox: cannot drop capabilities: %v\n", err)
			return exitSetup
		}
	}
	// The small init (internal/sandbox/tinyinit) that takes this
	// stage's place as pid 1 once the program runs, made before Landlock
	// and seccomp close the door. Not where the domain proxy must run
	// here (it is Go), nor in the mutation check of the undumpable init
	// (the small one always is).
	var tiny *os.File
	if container && !p.proxied() && wallDumpable.on() && wallSetsid.on() && !goInit {
		tiny, _ = tinyinit.File()
	}
	if wallLandlock.on() {
		if err := restrict(p, tmp, container, v.ownPTS); err != nil {
			fmt.Fprintf(os.Stderr, "reins sandbox: cannot apply the sandbox: %v\n", err)
			return exitSetup
		}
	}
	if wallSeccomp.on() {
		if err := loadSeccomp(); err != nil {
			fmt.Fprintf(os.Stderr, "reins sandbox: cannot load the seccomp filter: %v\n", err)
			return exitSetup
		}
	}
	if container {
		if p.proxied() {
			ln, err := net.Listen("tcp", proxyAddr)
			if err != nil {
				fmt.Fprintf(os.Stderr, "reins sandbox: cannot present the domain proxy: %v\n", err)
				return exitSetup
			}
			go func() { _ = netproxy.Forward(ln, proxySocket(tmp)) }()
		}
		// Nobody in the container may trace its init, read its memory or
		// its /proc/1/environ: it shares the program's uid and Landlock
		// domain, so only this (and the seccomp filter's refusal of
		// ptrace) stands between them. Set last, after every change of
		// credentials (which may reset it); the program's execve makes the
		// program dumpable again, as it should be (its own core dumps).
		if wallDumpable.on() {
			if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
				fmt.Fprintf(os.Stderr, "reins sandbox: cannot make the container's init undumpable: %v\n", err)
				return exitSetup
			}
		}
		maxProcs := 0
		if v.ownProc && wallPids.on() {
			maxProcs = p.Limits.MaxPids()
		}
		if spec.Gate && !awaitGate() {
			return exitSetup // the supervisor is gone: nobody waits
		}
		return initProgram(argv, maxProcs, tiny)
	}
	// No controlling terminal: TIOCSTI and job control on the user's
	// terminal are out of reach even where the filter is not.
	if wallSetsid.on() {
		_, _ = unix.Setsid()
	}
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0)
	err = syscall.Exec(argv[0], argv, os.Environ())
	fmt.Fprintf(os.Stderr, "reins sandbox: cannot start the program: %v\n", err)
	if errors.Is(err, syscall.ENOENT) {
		return exitNotFound
	}
	return exitSetup
}

// initProgram runs the program as the only child of this process, the init
// of the container's PID namespace: in a session of its own (no
// controlling terminal), with the signals the supervisor sends forwarded
// to its process group, and every orphan of the namespace reaped. When the
// program ends, so does this init, and with it — by the kernel — every
// process left in the namespace. A program killed by a signal is reported
// on fd 3 (the init of a namespace cannot die by its own signal).
//
// maxProcs > 0 is the process cap (limits.go): past it, every process of
// the namespace is killed and the program reported killed by SIGKILL.
//
// tiny, when not nil, is the small init (internal/sandbox/tinyinit): once
// the program runs, this stage execs it, and it does all of the above
// without the memory of a Go process. If that exec fails, this stage
// stays the init.
func initProgram(argv []string, maxProcs int, tiny *os.File) int {
	var procs *procCounter
	if maxProcs > 0 {
		var err error
		if procs, err = newProcCounter("/proc"); err != nil {
			// Rather than run the program without its cap.
			fmt.Fprintf(os.Stderr, "reins sandbox: cannot count the container's processes: %v\n", err)
			return exitSetup
		}
		defer procs.close()
	}
	if tiny != nil {
		path, err := exec.LookPath(argv[0])
		if err != nil {
			fmt.Fprintf(os.Stderr, "reins sandbox: cannot start the program: %v\n", err)
			if errors.Is(err, os.ErrNotExist) || errors.Is(err, exec.ErrNotFound) {
				return exitNotFound
			}
			return exitSetup
		}
		handOff(tiny, path, argv, maxProcs, procs)
	}
	// The same signals as the small init takes (one list for both).
	sigs := make(chan os.Signal, 8)
	for _, s := range tinyinit.Signals {
		signal.Notify(sigs, s)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: wallSetsid.on()}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "reins sandbox: cannot start the program: %v\n", err)
		if errors.Is(err, os.ErrNotExist) {
			return exitNotFound
		}
		return exitSetup
	}
	os.Stdin.Close()
	os.Stdout.Close()
	pid := cmd.Process.Pid
	report := func(sig syscall.Signal) int {
		f := os.NewFile(3, "report")
		_, _ = f.Write([]byte{byte(sig)})
		return 128 + int(sig)
	}
	var count <-chan time.Time
	if maxProcs > 0 {
		t := time.NewTicker(pidsPoll)
		defer t.Stop()
		count = t.C
	}
	for {
		var s os.Signal
		select {
		case s = <-sigs:
		case <-count:
			// This init is one of them.
			if n := procs.count() - 1; n > maxProcs {
				_ = syscall.Kill(-1, syscall.SIGKILL)
				fmt.Fprintln(os.Stderr, overCap(maxProcs))
				return report(syscall.SIGKILL)
			}
			continue
		}
		if s != syscall.SIGCHLD {
			_ = syscall.Kill(-pid, s.(syscall.Signal))
			continue
		}
		for {
			var ws syscall.WaitStatus
			got, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if err != nil || got <= 0 {
				break
			}
			if got != pid {
				continue
			}
			if ws.Signaled() {
				return report(ws.Signal())
			}
			return ws.ExitStatus()
		}
	}
}

// goSupervisor keeps the Go supervisor waiting for the container's init
// instead of the small watch; only tests set it, to run both
// (REINS_TEST_GO_SUPERVISOR).
var goSupervisor bool

// privateTmp is TMPDIR in the container when the watch waits: the
// container's own /tmp, a folder of its tmpfs (docs/sandbox.md, "Limits of
// the container"), gone with the container.
const privateTmp = "/tmp"

// removeTmp removes the host's private folder, if one was made.
func removeTmp(tmp string) {
	if tmp != "" {
		os.RemoveAll(tmp)
	}
}

// cleanupArg marks the watch's cleanup: reins run by the watch when a
// protected path that was missing exists once the program has ended
// (tinyinit's watch.go). Its arguments: the policy, then the paths.
const cleanupArg = "__reins-cleanup"

// cleanup removes the protected paths a confined process created, as the
// Go supervisor does when it ends (removeNewProtected).
func cleanup(args []string) int {
	if len(args) < 1 {
		fmt.Fprintf(os.Stderr, "reins supervisor: usage: %s POLICY [PATH...]\n", cleanupArg)
		return exitSetup
	}
	var p Policy
	if err := json.Unmarshal([]byte(args[0]), &p); err != nil {
		fmt.Fprintf(os.Stderr, "reins supervisor: bad policy: %v\n", err)
		return exitSetup
	}
	removeNewProtected(p, args[1:])
	return 0
}

// goInit keeps the confine stage as the container's init (the Go one);
// only tests set it, to run both inits (REINS_TEST_GO_INIT).
var goInit bool

// handOff execs the small init in tiny, which starts the program (path,
// argv) itself (see initProgram). It returns only when that failed, with
// everything as it was.
func handOff(tiny *os.File, path string, argv []string, maxProcs int, procs *procCounter) {
	if maxProcs > 0 {
		if err := inheritedAs(procs.fd, tinyinit.ProcFD); err != nil {
			return
		}
	}
	if err := inheritedAs(tinyinit.ReportFD, tinyinit.ReportFD); err != nil {
		return
	}
	_ = tinyinit.Exec(tiny, path, argv, maxProcs, overCap(maxProcs)+"\n", "reins sandbox: cannot start the program\n")
	unix.CloseOnExec(tinyinit.ReportFD)
	if maxProcs > 0 {
		unix.CloseOnExec(tinyinit.ProcFD)
	}
}

// inheritedAs makes fd the descriptor target, kept open across execve.
func inheritedAs(fd, target int) error {
	if fd != target {
		return unix.Dup3(fd, target, 0)
	}
	_, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0)
	return err
}

// awaitGate waits for the watch's start byte on gateFD (stage.go) and
// reports whether it came: the program starts only once the watch that
// will forward its signals and clean up after it runs.
func awaitGate() bool {
	f := os.NewFile(gateFD, "gate")
	defer f.Close()
	var b [1]byte
	n, _ := f.Read(b[:])
	return n == 1
}

// runtimeSignal reports whether Go's runtime handles sig itself whatever
// signal.Reset says (the synchronous faults): the supervisor cannot end
// by it.
func runtimeSignal(sig syscall.Signal) bool {
	switch sig {
	case syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL:
		return true
	}
	return false
}
