// Package parentwatch ends a reins binary when the launcher that started
// it dies (issue 48): the npm package's reins-cli launcher (a node
// process) runs reins as its child and names itself in $REINS_LAUNCHER_PID;
// killed with SIGKILL, it can forward nothing, and reins — or the
// reins-extra view or reins-tui it became — would go on as an orphan.
//
// Start, first thing in each binary's main, arms the watch when this
// process is the launcher's own child (its parent is that pid). A process
// further down (a reins sdk child, a tool) sees another parent and is not
// watched: its own parent answers for it. On Linux the kernel sends
// SIGTERM when the parent dies (PR_SET_PDEATHSIG, kept across the exec
// into a helper binary); elsewhere on unix a goroutine checks the parent
// once a second. SIGTERM ends every reins command cleanly (its session log
// closed, its children torn down). A launcher that dies between Start's
// check of the parent and the kernel's arming is noticed by a second check;
// one that died before the binary's main ran leaves it unwatched.
package parentwatch

// Env names the launcher's pid.
const Env = "REINS_LAUNCHER_PID"
