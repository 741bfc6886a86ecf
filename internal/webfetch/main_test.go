package webfetch

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no fetch leaves a goroutine behind (a kept-alive
// connection's reader, a redirect's).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
