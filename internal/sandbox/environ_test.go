//go:build linux

package sandbox

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// fakeReinsEnv makes a re-run of this test binary play reins: it holds
// the planted key in its own environment, as reins holds the user's keys,
// and starts the confined bash through the supervisor.
const fakeReinsEnv = "REINS_TEST_FAKE_REINS"

const (
	plantedKey    = "sk-planted-supervisor-environ-7c1e"
	environScript = `echo "ppid-environ:"; tr '\0' '\n' < /proc/$PPID/environ
echo "walk:"; for f in /proc/[0-9]*/environ; do tr '\0' '\n' < "$f"; done 2>/dev/null
echo "self:"; env`
)

// TestSupervisorEnvironHidden: a confined bash cannot read reins's
// unscrubbed environment through /proc — neither its parent's (the
// supervisor's) /proc/PID/environ nor any other process's found by walking
// /proc/*/environ, reins's included (a re-run of this binary plays reins
// and holds the planted key) — in the container and in the Landlock-only
// fallback (NoNamespaces; REINS_TEST_MUTATE=userns takes the same path).
//
// What guards it: in the container, its own /proc; in the fallback,
// Landlock's ptrace scope (reading environ is a ptrace-read check and the
// reader's domain is not the target's) — unless the reader holds
// CAP_SYS_PTRACE, which overrides it. Run by root, the fallback's program
// got every capability back at its execve, and on fbf78af read the key
// through both paths; the confine stage now empties the bounding set
// first (wall "caps": REINS_TEST_MUTATE=caps fails this test when run as
// root). PR_SET_DUMPABLE 0 on the supervisor does not help against root
// (CAP_SYS_PTRACE overrides it too) and is not needed otherwise.
func TestSupervisorEnvironHidden(t *testing.T) {
	requireLandlock(t)
	if os.Getenv(fakeReinsEnv) != "" {
		// The fake reins: run the attack, print what it saw.
		ws := t.TempDir()
		for _, noNS := range []bool{false, true} {
			for _, mode := range confinedModes() {
				out, code := runEnv(t, Policy{Mode: mode, Workspace: ws, NoNamespaces: noNS}, ws, nil, environScript)
				os.Stdout.WriteString("=== noNamespaces=" + map[bool]string{false: "false", true: "true"}[noNS] + " " + string(mode) + " exit " + itoa(code) + "\n" + out)
			}
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSupervisorEnvironHidden$", "-test.count=1")
	cmd.Env = append(os.Environ(), fakeReinsEnv+"=1", "ANTHROPIC_API_KEY="+plantedKey, "PLAIN_MARK=plain-9d2")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fake reins: %v\n%s\n%s", err, out, stderr.String())
	}
	runs := strings.Split(string(out), "=== ")[1:]
	if len(runs) != 4 {
		t.Fatalf("want 4 runs, got %d:\n%s", len(runs), out)
	}
	for _, r := range runs {
		head, _, _ := strings.Cut(r, "\n")
		if strings.Contains(r, plantedKey) {
			t.Errorf("%s: the planted key was read through /proc:\n%s", head, keyLines(r))
		}
		if !strings.Contains(r, "PLAIN_MARK=plain-9d2") {
			t.Errorf("%s: the plain variable did not reach the process:\n%s", head, r)
		}
	}
}

// keyLines are the section headers of out and the lines holding the
// planted key: where it was read.
func keyLines(out string) string {
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		if strings.HasSuffix(l, ":") || strings.Contains(l, plantedKey) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
