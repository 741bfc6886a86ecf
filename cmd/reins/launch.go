package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/reinsdev/reins/internal/cli"
)

// launchArgs rewrites the command line of the launch habits
// (docs/cli.md#launch-habits, internal/cli/launch.go) when it names no
// command: `reins -p TASK` (or --print) becomes `reins run TASK`, every
// flag of reins run applying; a --resume with no id becomes "--resume=",
// the session picker. A command line that names a command is left as it
// is.
func launchArgs(args []string) []string {
	if commandNamed(args) {
		// Nearly every command line: no flag set to build (a full one,
		// every flag of the interactive session, was 2-3 % of `reins
		// version`'s CPU).
		return args
	}
	var f cli.InteractiveFlags
	fl := pflag.NewFlagSet("reins", pflag.ContinueOnError)
	f.Register(fl)
	registerPrint(fl)
	flags, first := cli.ScanArgs(fl, args)
	if first >= 0 && commandNamed(args[first:]) {
		return args
	}
	for _, i := range flags {
		if args[i] == "-p" || args[i] == "--print" {
			return append([]string{"run"}, slices.Delete(slices.Clone(args), i, i+1)...)
		}
	}
	return cli.BareResume(args)
}

// registerPrint adds -p/--print to the root's flags, for its help and for
// launchArgs's reading of the command line: launchArgs has made a command
// line with it `reins run` before cobra parses it.
func registerPrint(fl *pflag.FlagSet) {
	fl.BoolP("print", "p", false, `run TASK headless and print the answer: reins -p "TASK" is reins run "TASK" (all of reins run's flags apply)`)
}

// taskArgs checks the arguments of the bare reins: a first argument that
// is one word (no space in it) within two edits of a command's name (or a
// prefix of one) is that command mistyped — `reins lgo`, `reins rn hi`:
// cobra's unknown-command error, which didYouMean completes — and
// anything else is the task sent as the terminal's first prompt (quoted,
// `reins "do it"` is a task whatever its first word).
func taskArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 && !strings.ContainsFunc(args[0], isSpace) && len(cmd.SuggestionsFor(args[0])) > 0 {
		return fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())
	}
	return nil
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }
