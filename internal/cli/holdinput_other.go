//go:build !unix

package cli

import "os"

// HoldInput does nothing here: the console keeps typed keys for the
// screen by itself.
func HoldInput(*os.File) (restore func()) { return func() {} }
