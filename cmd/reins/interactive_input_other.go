//go:build !unix

package main

import "os"

// holdInput does nothing here: the console keeps typed keys for the
// screen by itself.
func holdInput(*os.File) (restore func()) { return func() {} }
