package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateInHiddenHome: a reins child's state and config under a
// $REINS_HOME that lies in the private /tmp (as in tests) are still there:
// the state writable, seen on the host; the config readable.
func TestStateInHiddenHome(t *testing.T) {
	requireLandlock(t)
	h, ws := t.TempDir(), t.TempDir()
	state := filepath.Join(h, "sessions")
	os.MkdirAll(state, 0o755)
	os.WriteFile(filepath.Join(h, "config.yaml"), []byte("CONFIG-X"), 0o644)
	os.WriteFile(filepath.Join(h, "trusted.json"), []byte("TRUST-X"), 0o644)
	for _, mode := range []Mode{ReadOnly, WorkspaceWrite} {
		os.Remove(filepath.Join(state, "x"))
		out, _ := run(t, Policy{Mode: mode, Workspace: ws, Home: h, State: []string{state}, Readable: []string{filepath.Join(h, "config.yaml")}}, ws,
			`echo hi > `+shq(state)+`/x; cat `+shq(h)+`/config.yaml; cat `+shq(h)+`/trusted.json`)
		if _, err := os.Stat(filepath.Join(state, "x")); err != nil {
			t.Errorf("%s: the state write did not reach the host: %v\n%s", mode, err, out)
		}
		if !strings.Contains(out, "CONFIG-X") || strings.Contains(out, "TRUST-X") {
			t.Errorf("%s: want the config readable and the trust list hidden:\n%s", mode, out)
		}
	}
}
