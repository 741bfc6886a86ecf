package cli

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no signal watch outlives its Stop.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
