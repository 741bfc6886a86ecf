package sandbox

import (
	"os"
	"testing"

	"github.com/reinsdev/reins/internal/helperbin"
)

// TestSupervisorIsReins: in a helper that reins became (reins-tui, which
// took $REINS_EXE at start), confined processes are supervised by reins
// itself, the lighter binary, not by the helper.
func TestSupervisorIsReins(t *testing.T) {
	t.Cleanup(func() {
		os.Unsetenv(helperbin.ReinsEnv)
		helperbin.TakeReinsEnv() // back to "this executable"
	})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := self(); err != nil || got != exe {
		t.Fatalf("self() = %q, %v; want this executable %q", got, err, exe)
	}
	t.Setenv(helperbin.ReinsEnv, "/opt/reins/bin/reins")
	helperbin.TakeReinsEnv()
	if got, err := self(); err != nil || got != "/opt/reins/bin/reins" {
		t.Fatalf("self() = %q, %v; want the reins that started the helper", got, err)
	}
}
