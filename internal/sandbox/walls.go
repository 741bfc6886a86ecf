package sandbox

// wall names one wall of the sandbox. The mutation check of issue 26 turns
// one off at a time and records which escape attempts of the matrix test
// then get through (internal/sandbox/matrix_test.go): a wall no attempt
// depends on is either redundant or untested.
type wall string

const (
	wallUserNS       wall = "userns"        // the whole container: Landlock only (the fallback)
	wallNetNS        wall = "netns"         // the network namespace
	wallPIDNS        wall = "pidns"         // the PID namespace (and the container's own /proc)
	wallReadOnlyRoot wall = "readonly-root" // / read-only
	wallPrivateDirs  wall = "private-dirs"  // private /tmp, /var/tmp, /dev/shm, /run
	wallMasks        wall = "masks"         // credential paths and $REINS_HOME hidden
	wallProtect      wall = "protect"       // protected paths read-only, new ones removed
	wallSockets      wall = "sockets"       // outside servers' sockets covered
	wallLandlock     wall = "landlock"      // Landlock
	wallSeccomp      wall = "seccomp"       // the terminal ioctl filter
	wallSetsid       wall = "setsid"        // no controlling terminal
	wallEnv          wall = "env"           // the scrubbed environment
	wallCaps         wall = "caps"          // root's capabilities dropped in the fallback
	wallGit          wall = "git"           // every repository control folder found read-only
	wallGitSweep     wall = "git-sweep"     // a repository a confined process created, sanitised
	wallDev          wall = "dev"           // the container's own /dev (no host device but the listed ones)
	wallFDs          wall = "fds"           // descriptors reins inherited closed before the program
	wallTmpLimit     wall = "tmp-limit"     // one size-limited tmpfs for the private folders
	wallPids         wall = "pids"          // the process cap kept by the container's init
	wallDumpable     wall = "dumpable"      // the container's init not dumpable (no ptrace, no /proc/1/mem)
	wallNoTrace      wall = "no-trace"      // seccomp refuses ptrace and process_vm_readv/writev
)

// allWalls are the walls a test may turn off.
var allWalls = []wall{wallUserNS, wallNetNS, wallPIDNS, wallReadOnlyRoot, wallPrivateDirs, wallMasks,
	wallProtect, wallSockets, wallLandlock, wallSeccomp, wallSetsid, wallEnv, wallCaps, wallGit, wallGitSweep,
	wallDev, wallFDs, wallTmpLimit, wallPids, wallDumpable, wallNoTrace}

// offWalls are the walls turned off. Only test code sets it (from
// REINS_TEST_MUTATE, read by the test binary that also runs the
// supervisor and the confine stage); reins itself never does, so in a
// reins binary every wall stands.
var offWalls map[wall]bool

// on reports whether w stands.
func (w wall) on() bool { return !offWalls[w] }
