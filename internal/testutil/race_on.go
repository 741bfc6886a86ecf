//go:build race

package testutil

// Race tells whether this binary was built with -race: a helper binary a
// test builds to run code the test binary used to run itself is built the
// same way, so the race detector still watches that code.
const Race = true
