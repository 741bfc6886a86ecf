// Command reins is a Go agent harness for coding agents whose subagents
// always come back with an honest answer. See README.md and docs/.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/parentwatch"
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

// exitError carries an exit status out of a command (cli.ExitError, the
// one type reins-tui shares).
type exitError = cli.ExitError

func main() {
	parentwatch.Start() // an npm launcher's child ends with it
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Main runs the CLI and returns its exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	harness.ReinsVersion = version
	cli.CatchSIGPIPE()
	stdout, watched := cli.WatchStdout(stdout)
	args = launchArgs(args)
	root := newRoot(stdin, stdout, stderr, args...)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return watched.Ended(stderr)
	}
	return cli.Status(didYouMean(root, err), stderr)
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
	}
	root.SetFlagErrorFunc(cli.FlagError)
	root.SuggestionsMinimumDistance = 2
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	// cobra's completion command cannot be what a command line naming
	// another command runs: not building it (with its four shells) saves
	// every such run the work (TestOneCommandTree checks nothing shows).
	root.CompletionOptions.DisableDefaultCmd = commandNamed(args)
	for _, c := range commands {
		if named := len(args) > 0 && args[0] == c.name; named || !commandNamed(args) {
			root.AddCommand(c.new(s))
		}
	}
	addExtra(root, s)
	addInteractive(root, s)
	cli.Version(root, "reins "+version)
	cli.MarkRuntime(root)
	return root
}

// commands are reins's own commands. A command line that names one first
// builds only that one: building all of them is a third of `reins
// version`'s CPU on the hot path of every run (BENCHMARKS.md, "The
// ninth session"). Anything else — no command, a flag first, help,
// completion, a mistyped name that wants suggestions — gets the whole
// tree; TestOneCommandTree checks that each one built alone says what it
// says in the tree.
var commands = []struct {
	name string
	new  func(*streams) *cobra.Command
}{
	{"run", newRunCmd},
	{"log", newLogCmd},
	{"compact", newCompactCmd},
	{"agents", newAgentsCmd},
	{"skills", newSkillsCmd},
	{"hooks", newHooksCmd},
	{"models", newModelsCmd},
	{"mcp", newMCPCmd},
	{"sdk", newSDKCmd},
	{"version", newVersionCmd},
	{"trust", newTrustCmd},
	{"worker", newWorkerCmd},
	{"doctor", newDoctorCmd},
	{"worktree", newWorktreeCmd},
}

// commandNamed reports whether args start with the name of one of
// commands or of reins-extra's (cli.ExtraCommands), which need none of
// commands built.
func commandNamed(args []string) bool {
	if len(args) == 0 {
		return false
	}
	for _, c := range commands {
		if c.name == args[0] {
			return true
		}
	}
	for _, c := range cli.ExtraCommands {
		if c.Name == args[0] {
			return true
		}
	}
	return false
}

func newVersionCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run:   func(*cobra.Command, []string) { fmt.Fprintln(s.out, "reins "+version) },
	}
}
