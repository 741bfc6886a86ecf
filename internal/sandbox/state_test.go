//go:build linux

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

// TestKeptEnvPathVisible: a folder in the private /tmp that a variable the
// caller set on purpose names (pi's PI_CODING_AGENT_DIR from its agent
// file) comes back read-only; one named by another variable stays hidden.
func TestKeptEnvPathVisible(t *testing.T) {
	requireLandlock(t)
	kept, other, ws := t.TempDir(), t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(kept, "models.json"), []byte("KEPT-X"), 0o644)
	os.WriteFile(filepath.Join(other, "f"), []byte("OTHER-X"), 0o644)
	cmd, err := Command(Policy{Mode: WorkspaceWrite, Workspace: ws, Env: EnvPolicy{Keep: []string{"PI_DIR"}}}, "bash", "-c", `cat "$PI_DIR/models.json" "$OTHER/f"; echo x > "$PI_DIR/w" && echo WROTE`)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Dir, cmd.Env = ws, append(os.Environ(), "PI_DIR="+kept, "OTHER="+other)
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "KEPT-X") || strings.Contains(string(out), "OTHER-X") || strings.Contains(string(out), "WROTE") {
		t.Errorf("want the kept folder readable only, the other hidden:\n%s", out)
	}
}
