package undo

import (
	"testing"

	"github.com/reinsdev/reins/internal/testutil"
)

// TestMain makes reins itself the supervisor of the snapshots' git
// commands (testutil.MainWithReinsSupervisor): each is a confined process.
func TestMain(m *testing.M) { testutil.MainWithReinsSupervisor(m) }
