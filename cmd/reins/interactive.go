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

// addInteractive makes `reins` with no command on a terminal an
// interactive session (reins-tui, internal/tui); `reins "TASK"` opens it
// with TASK sent (docs/cli.md#launch-habits). Anywhere else (stdin or
// stdout not a terminal) the bare reins prints the help on stderr and
// exits 2, and reins "TASK" says to run it with -p: neither starts a run
// nobody asked to be headless. The flags are registered here too, so that
// reins's help names them and reins refuses a bad one before the screen
// starts.
func addInteractive(root *cobra.Command, s *streams) {
	var f cli.InteractiveFlags
	root.Use = `reins ["TASK"]`
	root.Long = root.Short + ".\n\nWith no command, on a terminal, reins opens an interactive session\n(Enter sends, /help lists commands, Ctrl-D exits); reins \"TASK\" opens it with TASK sent,\nreins --resume opens it with the session list. reins -p \"TASK\" (reins run) runs one task headless."
	root.Args = taskArgs
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if !isTerminal(s.in) || !isTerminal(s.out) {
			if len(args) > 0 {
				return &exitError{Code: exitUsage, Msg: `reins "TASK" opens the interactive terminal, and stdin or stdout is not one; to run the task headless: reins -p "TASK" (reins --help lists the commands)`}
			}
			cmd.SetOut(s.err)
			cmd.Help()
			return &exitError{Code: exitUsage}
		}
		if len(args) > 0 && f.PickResume(cmd.Flags()) {
			return &exitError{Code: exitUsage, Msg: "--resume with no session opens the session list; give the task once a session is open, or name one: reins --resume ID \"TASK\""}
		}
		return becomeTUI(cmd, s)
	}
	f.Register(root.Flags())
	registerPrint(root.Flags())
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
