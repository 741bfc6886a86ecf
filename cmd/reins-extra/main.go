// Command reins-extra holds the commands of reins that few runs need:
// demo, mock-llm, wrap, acp, view and batch (internal/cli.ExtraCommands),
// and `mcp serve` (cli.MCPServe).
// reins lists them and becomes reins-extra for them (exec on unix: the
// same process, streams, signals and exit status; on windows reins runs
// it and exits with its status), so that no other reins process pays for
// their code: `reins run`'s peak memory, every `reins sdk` child's
// (BENCHMARKS.md, "The reins-extra helper").
//
//	reins-extra COMMAND [flags]
//
// reins finds it through $REINS_EXTRA, beside its own executable, or on
// PATH, and names itself in $REINS_EXE: what runs the sandbox's supervisor
// and `reins sdk` for reins-provider children (helperbin.TakeReins;
// started directly, reins-extra looks for reins as reins looks for it).
package main

import (
	"io"
	"os"

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

// streams are the command's standard streams.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

// Main runs the command args name and returns its exit status. Usage and
// messages say "reins": to the user this is reins.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	harness.ReinsVersion = version
	helperbin.TakeReins()
	cli.CatchSIGPIPE()
	stdout, watched := cli.WatchStdout(stdout)
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		return cli.Status(err, stderr)
	}
	return watched.Ended(stderr)
}

// newRoot is the command tree: one command per cli.ExtraCommands entry.
func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	s := &streams{in: stdin, out: stdout, err: stderr}
	root := &cobra.Command{
		Use:           "reins",
		Short:         "The commands of reins that few runs need (run reins)",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(cli.FlagError)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(
		newDemoCmd(s),
		newMockLLMCmd(s),
		newWrapCmd(s),
		newACPCmd(s),
		newViewCmd(s),
		newBatchCmd(s),
		newMCPCmd(s),
	)
	cli.Version(root, "reins-extra "+version)
	cli.MarkRuntime(root)
	return root
}
