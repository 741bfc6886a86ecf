//go:build linux

package tool

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// TestWriteCannotBeRaced: 300 write calls into a folder while another thread
// swaps that folder with a symlink to outside the workspace
// (renameat2(RENAME_EXCHANGE), the attack of issue 26): no file lands
// outside. Every open goes through an os.Root of the workspace, so the
// check Resolve made earlier is not what keeps the write inside.
func TestWriteCannotBeRaced(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	outside := t.TempDir()
	dir := filepath.Join(env.Workspace, "d")
	link := filepath.Join(env.Workspace, "swap")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if err := unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE); err != nil {
		t.Fatalf("renameat2(RENAME_EXCHANGE): %v (Linux 3.15 or later has it)", err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var swaps atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE) == nil {
				swaps.Add(1)
			}
		}
	}()
	inside := 0
	for i := range 300 {
		res := call(t, env, "write", map[string]any{"path": fmt.Sprintf("d/f%d", i), "content": "x"})
		if !res.IsError {
			inside++
		}
	}
	close(stop)
	wg.Wait()
	leaked, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("300 writes, %d swaps, %d succeeded, %d outside", swaps.Load(), inside, len(leaked))
	if len(leaked) != 0 {
		t.Fatalf("%d of 300 writes landed outside the workspace", len(leaked))
	}
	if swaps.Load() == 0 {
		t.Fatal("the swapper never ran; the test proves nothing")
	}
}
