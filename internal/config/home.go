package config

import (
	"os"
	"path/filepath"
)

// Home is REINS_HOME as getenv sees it, else ~/.reins: where sessions,
// logs and the user's own configuration live.
func Home(getenv func(string) string) string {
	if h := getenv("REINS_HOME"); h != "" {
		return h
	}
	if d, err := os.UserHomeDir(); err == nil {
		return filepath.Join(d, ".reins")
	}
	return ".reins"
}

// StateDirs are the directories below home that a reins process writes
// while it runs: session logs and the host log. A confined reins child may
// write these and nothing else of home (not the config or the trust list).
func StateDirs(home string) []string {
	return []string{filepath.Join(home, "sessions"), filepath.Join(home, "logs")}
}
