// Package lazy holds package-level values built on first use without
// package initialisation.
//
// Every package that has initialisation code runs it at every start of
// every reins process, and the kernel maps the 64 KB of the binary around
// each such function: a reins that prints its version touched three
// quarters of its code that way (BENCHMARKS.md, sixth session).
// sync.OnceValue is a call, so a package-level
//
//	var m = sync.OnceValue(func() map[string]bool { … })
//
// needs initialisation code; a Value whose New is a function literal is
// laid out by the compiler and needs none.
package lazy

import "sync"

// Value is a value New builds on the first Get; later Gets return it.
// Declare it at package level with New set and use it through a pointer
// (Get has a pointer receiver): it holds a sync.Once and must not be
// copied.
type Value[T any] struct {
	New  func() T
	once sync.Once
	v    T
}

// Get returns the value, building it on the first call. Concurrent first
// calls wait for the one that builds it.
func (l *Value[T]) Get() T {
	l.once.Do(func() { l.v = l.New() })
	return l.v
}
