package tool

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/reinsdev/reins/internal/testutil"
)

// TestMain fails the package if a test leaves a process behind: every
// process the tests start carries the mark.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(testutil.ExitUnlessClean(testutil.Mark("internal/tool"))))
}
