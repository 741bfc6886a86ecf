package main

import (
	"errors"
	"regexp"
	"strings"

	"github.com/reinsdev/reins/internal/lazy"
	"github.com/spf13/cobra"
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
