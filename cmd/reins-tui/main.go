// Command reins-tui is the interactive terminal of reins (docs/interactive.md):
// `reins` with no command, on a terminal, becomes it (exec on unix: the
// same process, terminal, signals and exit status; on windows reins runs
// it and exits with its status), with the same arguments and environment.
// It holds the screen (internal/tui) and its terminal libraries, whose
// start-up no other reins process pays (BENCHMARKS.md, "Start-up").
//
//	reins-tui [the flags of reins] [TASK]
//
// reins checks the command line first; reins-tui parses it again with the
// same flags (internal/cli) and opens the session as reins run does.
// reins finds it through $REINS_TUI, beside its own executable, or on PATH,
// and names itself in $REINS_EXE (helperbin.TakeReins; started directly,
// reins-tui looks for reins as reins looks for it).
package main

import (
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/helperbin"
	"github.com/reinsdev/reins/internal/parentwatch"
)

// version is set at build time with -ldflags "-X main.version=...", like
// reins's own: a session records the version that ran it.
var version = "0.1.0-dev"

func main() {
	parentwatch.Start() // an npm launcher's child ends with it
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Main runs the interactive session the command line args describe and
// returns its exit status. Messages say "reins:": to the user this is
// reins.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	harness.ReinsVersion = version
	helperbin.TakeReins()
	var f cli.InteractiveFlags
	root := &cobra.Command{
		Use:           "reins-tui",
		Short:         "The interactive terminal of reins (run reins)",
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cli.IsTerminal(stdin) || !cli.IsTerminal(stdout) {
				return &cli.ExitError{Code: cli.ExitUsage, Msg: "the interactive session needs a terminal on stdin and stdout (reins run runs one task headless)"}
			}
			// The first input (docs/cli.md#launch-habits): the task of
			// `reins "TASK"`, or the session list of a bare --resume.
			first := strings.Join(args, " ")
			if f.PickResume(cmd.Flags()) {
				if first != "" {
					return &cli.ExitError{Code: cli.ExitUsage, Msg: "--resume with no session opens the session list; give the task once a session is open, or name one: reins --resume ID \"TASK\""}
				}
				first = cli.ResumePicker
			}
			if err := interactiveMain(cmd.Context(), stdin, stdout, stderr, &f, first); err != nil {
				return &cli.RuntimeError{Err: err}
			}
			return nil
		},
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	f.Register(root.Flags())
	cli.Version(root, "reins-tui "+version)
	root.SetArgs(cli.BareResume(args))
	if err := root.Execute(); err != nil {
		return cli.Status(err, stderr)
	}
	return cli.ExitOK
}
