//go:build !race

package testutil

// Race tells whether this binary was built with -race (race_on.go).
const Race = false
