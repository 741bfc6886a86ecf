package sandbox

// The Landlock features a confined policy needs.
const (
	// ABI 3 is the first that controls truncate(2): without it a confined
	// process could still empty any file it can read.
	minFSABI = 3
	// ABI 4 restricts TCP bind and connect.
	minNetABI = 4
	// ABI 6 scopes signals and abstract Unix sockets: a confined process
	// cannot signal reins or anything else outside its domain, nor connect
	// to an abstract socket bound outside it. Used where present.
	signalScopeABI = 6
	// ABI 9 controls connect(2) and sendmsg(2) on pathname Unix sockets
	// made outside the domain (sockets.go). Used where present.
	resolveUnixABI = 9
)
