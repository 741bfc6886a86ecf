package undo

import (
	"fmt"
	"os"
	"testing"

	"github.com/reinsdev/reins/internal/testutil"
)

// TestMain makes reins itself the supervisor of the snapshots' git
// commands (testutil.UseReinsSupervisor): each is a confined process.
func TestMain(m *testing.M) {
	cleanup, err := testutil.UseReinsSupervisor()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}
