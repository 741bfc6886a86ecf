//go:build !linux || !amd64

package tinyinit

const machine = 0

// code: no init for this architecture yet; the sandbox runs its Go init.
func code() []byte { return nil }

// watchCode: no watch either; the supervisor stays a Go program.
func watchCode() []byte { return nil }
