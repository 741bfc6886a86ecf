package cli

import (
	"strings"

	"github.com/spf13/pflag"
)

// The launch habits of Claude Code that reins keeps (docs/cli.md#launch-habits):
// `reins "TASK"` opens the terminal with TASK sent, `reins -p "TASK"` is
// `reins run "TASK"`, and `reins --resume` with no id opens the session
// picker while `reins --resume ID` continues ID as it always did. pflag
// cannot parse the last one alone (a flag whose value is optional never
// takes the next argument as its value), so the command line is rewritten
// before cobra sees it, here, for reins and reins-tui alike.

// ResumePicker is the first input of a terminal opened by `reins --resume`
// with no id: the session list (the terminal's /resume).
const ResumePicker = "/resume"

// BareResume returns args with a --resume that names no session — the
// last argument before any "--", or followed by a flag — written as
// "--resume=", which InteractiveFlags.PickResume reads as "open the
// picker". `--resume ID` and `--resume=ID` are left as they are.
func BareResume(args []string) []string {
	for i, a := range args {
		if a == "--" {
			break
		}
		if a == "--resume" && (i+1 == len(args) || strings.HasPrefix(args[i+1], "-")) {
			out := append([]string(nil), args...)
			out[i] = "--resume="
			return out
		}
	}
	return args
}

// PickResume reports whether the command line asked for the session
// picker: --resume given with no id (BareResume).
func (f *InteractiveFlags) PickResume(fl *pflag.FlagSet) bool {
	return f.Resume == "" && fl.Changed("resume")
}

// ScanArgs reads a command line as fl would (flags and arguments
// interspersed): flags are the indexes of the arguments that are flags of
// fl (not a flag's value, nor anything after "--"), and first is the
// index of the first argument that is neither, where a command name would
// be (-1: none). An unknown flag is taken to have no value (cobra refuses
// it later).
func ScanArgs(fl *pflag.FlagSet, args []string) (flags []int, first int) {
	first = -1
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if first < 0 && i+1 < len(args) {
				first = i + 1
			}
			return flags, first
		case strings.HasPrefix(a, "--"):
			flags = append(flags, i)
			if strings.Contains(a, "=") {
				continue
			}
			if f := fl.Lookup(a[2:]); f != nil && f.NoOptDefVal == "" {
				i++ // its value
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			flags = append(flags, i)
			// -m VALUE, -mVALUE, -yc, -ym VALUE: a short flag that takes a
			// value takes the rest of its argument, or the next one.
			for j := 1; j < len(a); j++ {
				if f := fl.ShorthandLookup(a[j : j+1]); f != nil && f.NoOptDefVal == "" {
					if j == len(a)-1 {
						i++
					}
					break
				}
			}
		default:
			if first < 0 {
				first = i
			}
		}
	}
	return flags, first
}
