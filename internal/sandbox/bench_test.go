//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// BenchmarkStart is the sandbox's cost per process: `true` started
// directly, then under the supervisor unconfined and confined. The
// supervisor is the real reins binary (built once), not this test binary,
// so the figure is what a user pays per bash call and per child start.
func BenchmarkStart(b *testing.B) {
	reins := filepath.Join(b.TempDir(), "reins")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s", "-o", reins, "github.com/reinsdev/reins/cmd/reins")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	defer func(old string) { exeOverride = old }(exeOverride)
	exeOverride = reins
	ws := b.TempDir()
	run := func(b *testing.B, cmd *exec.Cmd) {
		cmd.Dir = ws
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			run(b, exec.Command("true"))
		}
	})
	for _, c := range []struct {
		name string
		p    Policy
	}{
		{"supervised-unconfined", Policy{Mode: FullAccess}},
		{"supervised-workspace-write", Policy{Mode: WorkspaceWrite, Workspace: ws}},
		{"supervised-read-only-no-network", Policy{Mode: ReadOnly, Workspace: ws, DenyNetwork: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				cmd, err := Command(c.p, "true")
				if err != nil {
					b.Fatal(err)
				}
				run(b, cmd)
			}
		})
	}
	_ = os.Remove(reins)
}
