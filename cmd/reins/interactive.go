package main

import (
	"github.com/spf13/cobra"

	"github.com/reinsdev/reins/internal/cli"
	"github.com/reinsdev/reins/internal/helperbin"
)

// The interactive terminal's helper binary: `reins` with no command, on a
// terminal, becomes reins-tui. The screen's libraries (Bubble Tea,
// Lip Gloss, the clipboard, the ANSI parser) live only there: they cost
// every reins process, every `reins sdk` child among them, about 1 MiB of
// peak RSS and 16 package inits (`reins version`: 14.0 → 13.0 MiB).
const (
	tuiName = "reins-tui"
	// tuiEnv names the helper's path, over the search.
	tuiEnv = "REINS_TUI"
)

// addInteractive makes `reins` with no arguments on a terminal an
// interactive session (reins-tui, internal/tui). Anywhere else (stdin or
// stdout not a terminal) it prints the help on stderr and exits 2: there
// is no task. The flags are registered here too, so that reins's help
// names them and reins refuses a bad one before the screen starts.
func addInteractive(root *cobra.Command, s *streams) {
	var f cli.InteractiveFlags
	root.Long = root.Short + ".\n\nWith no command, on a terminal, reins opens an interactive session\n(Enter sends, /help lists commands, Ctrl-D exits); reins run runs one task headless."
	root.Args = cobra.NoArgs
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if !isTerminal(s.in) || !isTerminal(s.out) {
			cmd.SetOut(s.err)
			cmd.Help()
			return &exitError{Code: exitUsage}
		}
		return becomeTUI(cmd, s)
	}
	f.Register(root.Flags())
}

// becomeTUI replaces reins with reins-tui, the same arguments and
// environment (and $REINS_EXE naming this reins, which runs the session's
// reins-provider children: `reins sdk`); on unix by exec, elsewhere by
// running it on the same console and exiting with its status.
func becomeTUI(cmd *cobra.Command, s *streams) error {
	path, err := helperbin.Find(tuiName, tuiEnv)
	if err != nil {
		return &exitError{Code: exitUsage, Msg: tuiName + " not found beside reins or on PATH: the interactive session needs it; install it as reins was, or from a checkout: go build -o bin/ ./cmd/... (docs/interactive.md#the-reins-tui-helper)"}
	}
	if err := nameReins(tuiName, tuiEnv, path); err != nil {
		return err
	}
	return become(cmd, s, tuiName, path, s.args)
}
