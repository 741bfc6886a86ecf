//go:build !unix

package parentwatch

// Start does nothing off unix: on windows a console's processes end
// together, and the launcher waits for reins there as everywhere.
func Start() {}
