package config

import (
	"testing"
	"time"
)

// A kept child is stopped after two idle minutes unless the config says
// otherwise (issue 48: an idle opencode child held 567 MB for as long as
// the old ten minutes).
func TestDefaultIdleTimeout(t *testing.T) {
	if got := Default().Subagents.IdleTimeout; got != 2*time.Minute {
		t.Errorf("subagents.idleTimeout default = %v, want 2m", got)
	}
}
