package main

import (
	"errors"
	"regexp"
	"strings"

	"github.com/reinsdev/reins/internal/catalog"
	"github.com/reinsdev/reins/internal/lazy"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// unknownCommand and unknownFlag read cobra's errors; compiled only when
// a command line is wrong, not in every process.
var unknownCommand = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(`^unknown command "([^"]*)" for "`)
}}

// didYouMean adds to cobra's "unknown command" error the commands whose
// names are close (cobra suggests only where no Args validator runs, and
// the bare `reins` has one).
func didYouMean(root *cobra.Command, err error) error {
	m := unknownCommand.Get().FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	if s := root.SuggestionsFor(m[1]); len(s) > 0 {
		return errors.New(err.Error() + "; did you mean " + strings.Join(s, " or ") + "?")
	}
	return errors.New(err.Error() + " (reins --help lists the commands)")
}

var unknownFlag = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^unknown flag: --([^ ]+)$`) }}

// flagError adds the closest flags of cmd to an unknown-flag error.
func flagError(cmd *cobra.Command, err error) error {
	m := unknownFlag.Get().FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	typed := m[1]
	var close []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if catalog.Distance(typed, f.Name) <= max(1, len(typed)/4) || (len(typed) >= 3 && strings.HasPrefix(f.Name, typed)) {
			close = append(close, "--"+f.Name)
		}
	})
	if len(close) == 0 {
		return err
	}
	return errors.New(err.Error() + "; did you mean " + strings.Join(close, " or ") + "?")
}
