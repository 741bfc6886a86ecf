package cli

import (
	"errors"
	"regexp"
	"strings"

	"github.com/reinsdev/reins/internal/catalog"
	"github.com/reinsdev/reins/internal/lazy"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var unknownFlag = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^unknown flag: --([^ ]+)$`) }}

// FlagError adds the closest flags of cmd to an unknown-flag error (a
// cobra FlagErrorFunc: reins and reins-extra set it on their roots).
func FlagError(cmd *cobra.Command, err error) error {
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
