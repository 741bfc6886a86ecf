package main

import (
	"github.com/reinsdev/reins/internal/harness"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// listingFlags are the flags of the commands that only read the
// configuration (agents, models, mcp list): which workspace, which extra
// config.
type listingFlags struct{ cwd, config string }

func (f *listingFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.cwd, "cwd", "", "workspace directory (default: the current directory)")
	fl.StringVar(&f.config, "config", "", "an extra config file, applied last")
}

// open loads the configuration and says once what an untrusted folder's
// project files were ignored. The caller closes the harness.
func (f *listingFlags) open(s *streams) (*harness.Harness, error) {
	h, err := harness.New(harness.Options{Cwd: f.cwd, ConfigFile: f.config})
	if err != nil {
		return nil, err
	}
	noticeUntrusted(s, h)
	return h, nil
}

// listingCmd is the command use (agents, models, mcp list) that only reads
// the configuration, so that all of them take the same flags and open it
// the same way: list prints from the opened harness, which is closed after.
func listingCmd(s *streams, use, short string, list func(h *harness.Harness) error) *cobra.Command {
	var f listingFlags
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			h, err := f.open(s)
			if err != nil {
				return err
			}
			defer h.Close()
			return list(h)
		},
	}
	f.register(c.Flags())
	return c
}
