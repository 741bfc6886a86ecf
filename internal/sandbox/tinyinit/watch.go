package tinyinit

// The watch is the supervisor's second half, a program of the same kind
// as the init: a few hundred bytes of machine code, for the same reason.
// A confined child in the container used to keep a Go supervisor beside
// it for as long as it ran — about 1 MiB of private memory that only
// waited (issue 47: 100 confined `reins` children cost 1.67× wave 1's
// memory, 1.06 MiB of each child being its supervisor). The Go supervisor
// still does everything that needs Go — the policy, the private folder,
// the walk of the workspace, starting the confine stage in its
// namespaces — and then, where it has nothing left to do but wait, execs
// the watch in its own place (same process, same parent, same process
// group), which
//
//   - names itself reins-watch and takes SIGHUP, SIGINT, SIGQUIT, SIGTERM,
//     SIGUSR2 and SIGCHLD synchronously (the Go supervisor execs it with
//     them blocked, having installed no handler of its own, so none is
//     lost or taken by Go's runtime in between);
//   - writes one byte on the start descriptor: the confine stage waits
//     for it before it starts the program, so the program never runs
//     while nobody would forward a signal to it or clean up after it;
//   - forwards the first four signals to the child (the container's init,
//     which forwards them to the program), and SIGKILLs the child once the
//     grace has passed since the first;
//   - SIGKILLs the child when reins is gone: its parent is no longer
//     reins's pid (looked at every 100 ms, and at once on SIGUSR2, the
//     parent-death signal the Go supervisor asked for);
//   - when the child has ended, reads the signal the init reported on the
//     report descriptor, and if a protected path that was missing before
//     exists now, runs reins's own cleanup (a child it waits for: removing
//     what a confined process wrote there is Go, and runs only then);
//   - ends as the program ended: its exit status, or killed by the same
//     signal (the faults Go's runtime keeps — SIGILL, SIGBUS, SIGFPE,
//     SIGSEGV — as 128+signal, as the Go supervisor ends).
//
// Its arguments: argv[2] the child's pid, argv[3] the grace in
// milliseconds, argv[4] reins's pid, argv[5] the report descriptor,
// argv[6] the start descriptor (all decimal); argv[7] the cleanup's
// executable and argv[8] on its arguments (argv[8] its argv[0]), of which
// argv[11] on are the protected paths that were missing. argv[0] and
// argv[1] are names for ps.

// WatchImage is the watch as a static ELF executable for this machine,
// or nil where there is none: the Go supervisor then keeps waiting itself.
func WatchImage() []byte {
	c := watchCode()
	if c == nil {
		return nil
	}
	return wrap(c, machine)
}
