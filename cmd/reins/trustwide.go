package main

import (
	"os"
	"path/filepath"

	"github.com/reinsdev/reins/internal/trust"
)

// wideTrust refuses, unless yes, to trust the file system's root or the
// user's home folder: trust covers every folder below, so either would
// trust every project the user ever clones or downloads, whose files can
// start programs and choose where API keys go.
func wideTrust(dir string, yes bool) error {
	if yes {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil // the store says what is wrong with it
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	what := ""
	if abs == filepath.VolumeName(abs)+string(filepath.Separator) {
		what = "the root of the file system"
	} else if home, err := os.UserHomeDir(); err == nil && home != "" {
		if h, err := filepath.EvalSymlinks(home); err == nil {
			home = h
		}
		if abs == filepath.Clean(home) {
			what = "your home folder"
		}
	}
	if what == "" {
		return nil
	}
	return &exitError{Code: exitUsage, Msg: "trust: " + trust.Quote(abs) + " is " + what +
		": trusting it trusts every folder below it, so any project you clone or download there could start programs and redirect your API keys; trust the project folders instead, or pass --yes if you mean it"}
}
