//go:build !unix

package trust

import "context"

// lock is a no-op where flock is missing: concurrent `reins trust` runs
// may then lose an entry (never corrupt the file, which is renamed into
// place).
func lock(context.Context, string) (func(), error) { return func() {}, nil }
