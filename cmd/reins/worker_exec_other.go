//go:build !unix

package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
)

// execHelper runs path with args to its end, on this process's standard
// streams, and returns its exit status (there is no exec here).
func execHelper(ctx context.Context, _ *streams, path string, args []string) (int, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, err
}
