// Command reins is a Go agent harness for coding agents whose subagents
// always come back with an honest answer. See README.md and docs/.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// Exit statuses of reins run (docs/cli.md; cli holds them for reins-tui
// too).
const (
	exitOK        = cli.ExitOK
	exitFailed    = cli.ExitFailed
	exitUsage     = cli.ExitUsage
	exitInterrupt = cli.ExitInterrupt
)

// exitError carries an exit status out of a command. A message, when set,
// is printed on stderr as one line.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func main() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

// Main runs the CLI and returns its exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	harness.ReinsVersion = version
	catchSIGPIPE()
	var watched *watchedWriter
	if !isTerminal(stdout) {
		// A terminal is left as it is (the interactive screen and the
		// streamed answer need the *os.File); a pipe or file is watched.
		watched = &watchedWriter{w: stdout}
		stdout = watched
	}
	root := newRoot(stdin, stdout, stderr, args...)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		if werr := watched.failed(); werr != nil {
			fmt.Fprintln(stderr, "reins: writing to stdout: "+termsafe.Escape(werr.Error()))
			return exitFailed
		}
		return exitOK
	}
	err = didYouMean(root, err)
	err = fromCLI(err)
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "reins: "+termsafe.Escape(ee.msg))
		}
		return ee.code
	}
	var ce *harness.ConfigError
	if errors.As(err, &ce) {
		fmt.Fprintln(stderr, "reins: "+termsafe.Escape(ce.Error()))
		return exitUsage
	}
	var re *runtimeError
	if errors.As(err, &re) {
		fmt.Fprintln(stderr, "reins: "+re.Error())
		return exitFailed
	}
	// cobra's own errors (unknown flag, bad arguments) are usage errors.
	fmt.Fprintln(stderr, "reins: "+termsafe.Escape(err.Error()))
	return exitUsage
}

// runtimeError is an untyped error a command returned after cobra had
// accepted its flags and arguments: the run failed (a session directory
// that cannot be created, a file system error), which is exit 1, not a
// usage error. Usage and configuration errors are typed (exitError,
// harness.ConfigError) where they are found.
type runtimeError struct{ err error }

func (e *runtimeError) Error() string { return e.err.Error() }
func (e *runtimeError) Unwrap() error { return e.err }

// markRuntime wraps the RunE of c and its subcommands so that an untyped
// error they return is a runtimeError.
func markRuntime(c *cobra.Command) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			err := run(cmd, args)
			var ee *exitError
			var se *cli.ExitError
			var ce *harness.ConfigError
			if err == nil || errors.As(err, &ee) || errors.As(err, &se) || errors.As(err, &ce) {
				return err
			}
			return &runtimeError{err}
		}
	}
	for _, sub := range c.Commands() {
		markRuntime(sub)
	}
}

// fromCLI is err as an exitError when it carries a cli.ExitError (what
// the session setup shared with reins-tui returns): one exit rule.
func fromCLI(err error) error {
	var se *cli.ExitError
	if errors.As(err, &se) {
		return &exitError{code: se.Code, msg: se.Msg}
	}
	return err
}

type streams struct {
	in       io.Reader
	out, err io.Writer
	// args is the command line, which reins-tui gets unchanged.
	args []string
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer, args ...string) *cobra.Command {
	s := &streams{in: stdin, out: stdout, err: stderr, args: args}
	root := &cobra.Command{
		Use:           "reins",
		Short:         "A Go agent harness whose subagents always come back with an honest answer",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.SetVersionTemplate("reins {{.Version}}\n")
	root.SetFlagErrorFunc(flagError)
	root.SuggestionsMinimumDistance = 2
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(
		newRunCmd(s),
		newLogCmd(s),
		newCompactCmd(s),
		newDemoCmd(s),
		newMockLLMCmd(s),
		newAgentsCmd(s),
		newModelsCmd(s),
		newMCPCmd(s),
		newSDKCmd(s),
		&cobra.Command{
			Use:   "version",
			Short: "Print the version",
			Args:  cobra.NoArgs,
			Run:   func(*cobra.Command, []string) { fmt.Fprintln(stdout, "reins "+version) },
		},
		newWrapCmd(s),
		newACPCmd(s),
		newTrustCmd(s),
		newViewCmd(s),
		newBatchCmd(s),
		newWorkerCmd(s),
		newDoctorCmd(s),
		newWorktreeCmd(s),
	)
	addInteractive(root, s)
	markRuntime(root)
	return root
}
