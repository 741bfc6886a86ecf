package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/termsafe"
)

// RuntimeError is an untyped error a command returned after cobra had
// accepted its flags and arguments: the run failed (a session directory
// that cannot be created, a file system error), which is exit 1, not a
// usage error. Usage and configuration errors are typed (ExitError,
// harness.ConfigError) where they are found.
type RuntimeError struct{ Err error }

func (e *RuntimeError) Error() string { return e.Err.Error() }
func (e *RuntimeError) Unwrap() error { return e.Err }

// MarkRuntime wraps the RunE of c and its subcommands so that an untyped
// error they return is a *RuntimeError.
func MarkRuntime(c *cobra.Command) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			err := run(cmd, args)
			var ee *ExitError
			var ce *harness.ConfigError
			if err == nil || errors.As(err, &ee) || errors.As(err, &ce) {
				return err
			}
			return &RuntimeError{err}
		}
	}
	for _, sub := range c.Commands() {
		MarkRuntime(sub)
	}
}

// Status is the exit status of a command that ended with err (not nil),
// after its one line on stderr: an ExitError's status and message, a
// configuration error 2, a RuntimeError 1, and cobra's own errors (an
// unknown flag, a bad argument) 2. Every message is escaped. reins and
// reins-tui both end here: one exit rule.
func Status(err error, stderr io.Writer) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Msg != "" {
			fmt.Fprintln(stderr, "reins: "+termsafe.Escape(ee.Msg))
		}
		return ee.Code
	}
	fmt.Fprintln(stderr, "reins: "+termsafe.Escape(err.Error()))
	var ce *harness.ConfigError
	var re *RuntimeError
	if !errors.As(err, &ce) && errors.As(err, &re) {
		return ExitFailed
	}
	return ExitUsage
}
