//go:build linux

package tinyinit

import (
	"bytes"
	"unsafe"
)

const machine = 62 // EM_X86_64

// start is the address of the init's first instruction in reins's text
// (tinyinit_amd64.s).
func start() *byte

// watchStart is the watch's (watch_amd64.s).
func watchStart() *byte

// code is the init's machine code, copied from reins's text up to the
// marker, or nil when the marker is not within maxCode bytes.
func code() []byte { return codeAt(start()) }

// watchCode is the watch's.
func watchCode() []byte { return codeAt(watchStart()) }

func codeAt(first *byte) []byte {
	text := unsafe.Slice(first, maxCode)
	n := bytes.Index(text, marker[:])
	if n < 0 {
		return nil
	}
	return bytes.Clone(text[:n])
}
