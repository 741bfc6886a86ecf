//go:build !unix

package acpchild

import "errors"

// pollable: pipes here are not pollable, so the filter reads the child's
// stdout with plain blocking reads and is never known idle (the caller's
// bound applies, as for any reader without a raw connection).
const pollable = false

func readFD(uintptr, []byte) (int, bool, error) {
	return 0, false, errors.ErrUnsupported
}

func pending(uintptr) int { return -1 }
