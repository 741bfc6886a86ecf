// Command reins is a Go agent harness for coding agents whose subagents
// always come back with an honest answer. See README.md and docs/.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// Exit statuses of reins run (docs/cli.md).
const (
	exitOK        = 0
	exitFailed    = 1
	exitUsage     = 2
	exitInterrupt = 130
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
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "reins: "+ee.msg)
		}
		return ee.code
	}
	var ce *harness.ConfigError
	if errors.As(err, &ce) {
		fmt.Fprintln(stderr, "reins: "+ce.Error())
		return exitUsage
	}
	// cobra's own errors (unknown flag, bad arguments) are usage errors.
	fmt.Fprintln(stderr, "reins: "+err.Error())
	return exitUsage
}

type streams struct {
	in       io.Reader
	out, err io.Writer
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	s := &streams{in: stdin, out: stdout, err: stderr}
	root := &cobra.Command{
		Use:           "reins",
		Short:         "A Go agent harness whose subagents always come back with an honest answer",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.SetVersionTemplate("reins {{.Version}}\n")
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(
		newRunCmd(s),
		newLogCmd(s),
		newDemoCmd(s),
		newMockLLMCmd(s),
		newAgentsCmd(s),
		newModelsCmd(s),
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
	)
	return root
}
