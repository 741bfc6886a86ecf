//go:build unix

package main

import (
	"context"
	"os"
	"syscall"
)

// execHelper replaces this process with path (argv[0] is path, then
// args); it returns only when the exec failed.
func execHelper(_ context.Context, _ *streams, path string, args []string) (int, error) {
	return 0, syscall.Exec(path, append([]string{path}, args...), os.Environ())
}
