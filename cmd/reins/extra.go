package main

import (
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/helperbin"
)

// addExtra lists the commands reins-extra holds (cli.ExtraCommands) under
// their own names; each becomes reins-extra with the same arguments. Flags
// and --help are reins-extra's to parse: reins passes them through.
func addExtra(root *cobra.Command, s *streams) {
	for _, c := range cli.ExtraCommands {
		root.AddCommand(&cobra.Command{
			Use:                c.Name,
			Short:              c.Short,
			DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, args []string) error {
				return forwardExtra(cmd, s, []string{c.Name}, args)
			},
		})
	}
}

// forwardExtra becomes reins-extra running the command named by words
// (`batch`, or `mcp serve`) with args.
func forwardExtra(cmd *cobra.Command, s *streams, words, args []string) error {
	path, err := helperbin.Find(cli.ExtraName, cli.ExtraEnv)
	if err != nil {
		return &exitError{Code: exitUsage, Msg: cli.ExtraName + " not found beside reins or on PATH: reins " + strings.Join(words, " ") + " needs it; install it as reins was, or from a checkout: go build -o bin/ ./cmd/... (docs/cli.md#helper-binaries)"}
	}
	if err := nameReins(cli.ExtraName, cli.ExtraEnv, path); err != nil {
		return err
	}
	return become(cmd, s, cli.ExtraName, path, append(slices.Clone(words), args...))
}

// nameReins names this reins in $REINS_EXE for the helper name (found
// through $env or at path) it becomes next (reins-tui, reins-extra): what the helper runs `reins sdk` and the
// sandbox's supervisor from (helperbin.TakeReins). The helper takes the
// variable out of its environment first thing, so finding it set means the
// "helper" reins became was reins again ($REINS_EXTRA or $REINS_TUI naming
// reins, a wrong file on PATH): an error, not an exec loop that never ends.
func nameReins(name, env, path string) error {
	if os.Getenv(helperbin.ReinsEnv) != "" {
		return &exitError{Code: exitUsage, Msg: path + " is not " + name + ": it ran this command as reins does (check $" + env + " and PATH)"}
	}
	if exe, err := helperbin.Reins(); err == nil {
		os.Setenv(helperbin.ReinsEnv, exe)
	}
	return nil
}

// become replaces reins with the helper binary at path (name is its name
// in messages), run with args and this environment. On unix it is an
// exec: the same process, streams, signals and exit status, so a signal
// or a SIGKILL meant for the command reaches it; it
// returns only when the exec failed. Elsewhere reins runs the helper on
// its streams and exits with its status.
func become(cmd *cobra.Command, s *streams, name, path string, args []string) error {
	if runtime.GOOS == "windows" {
		// The console's Ctrl-C reaches both processes; the helper
		// decides, reins waits for its status.
		signal.Ignore(os.Interrupt)
	}
	code, err := execHelper(cmd.Context(), s, path, args)
	if err != nil {
		return &exitError{Code: exitFailed, Msg: "start " + name + ": " + err.Error()}
	}
	if code != 0 {
		return &exitError{Code: code}
	}
	return nil
}
