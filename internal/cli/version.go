package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// Version gives root a --version flag (-v when free) that prints line,
// as cobra's Version field would. Cobra prints anything but its default
// "NAME version X" through a text/template, which would link the template
// engine into every reins process for one line (BENCHMARKS.md, sixth
// session). Call it after root's RunE is set; root.Version stays empty.
func Version(root *cobra.Command, line string) {
	short := "v"
	if root.Flags().ShorthandLookup("v") != nil {
		short = ""
	}
	root.Flags().BoolP("version", short, false, "version for "+root.Name())
	run := root.RunE
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if v, _ := cmd.Flags().GetBool("version"); v {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), line)
			return err
		}
		if run == nil {
			return cmd.Help()
		}
		return run(cmd, args)
	}
}
