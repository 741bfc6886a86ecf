// Command reins-temporal is the temporal engine's helper binary
// (docs/engine.md). It holds the Temporal SDK, whose start-up cost no
// other reins command pays (BENCHMARKS.md, "Start-up"):
//
//	reins-temporal client --address A --namespace N --task-queue Q [--submit D]
//	    submits a parent's child runs; reins drives it over stdio with the
//	    protocol of internal/engine/wire.
//	reins-temporal worker [flags of reins worker]
//	    what `reins worker` runs: the Temporal worker that executes them.
//
// reins finds it beside its own executable or on PATH.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/parentwatch"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...", like
// reins's own.
var version = "0.1.0-dev"

const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

// exitError ends the command with code and, when msg is set, one line on
// stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func main() {
	parentwatch.Start() // an npm launcher's child ends with it
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Main runs the command line args.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	harness.ReinsVersion = version
	root := &cobra.Command{
		Use:           "reins-temporal",
		Short:         "The Temporal engine of reins: its client and its worker",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newClientCmd(stdin, stdout, stderr), newWorkerCmd(stderr), newFenceCmd(stdin, stderr), &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run:   func(*cobra.Command, []string) { fmt.Fprintln(stdout, "reins-temporal "+version) },
	})
	cli.Version(root, "reins-temporal "+version)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "reins-temporal: "+termsafe.Escape(ee.msg))
		}
		return ee.code
	}
	var ce *harness.ConfigError
	if errors.As(err, &ce) {
		fmt.Fprintln(stderr, "reins-temporal: "+termsafe.Escape(ce.Error()))
		return exitUsage
	}
	fmt.Fprintln(stderr, "reins-temporal: "+termsafe.Escape(err.Error()))
	return exitUsage
}
