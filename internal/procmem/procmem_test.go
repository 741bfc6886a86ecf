package procmem

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A tree's RSS counts its descendants: a shell whose child holds 64 MiB
// of touched memory weighs more than that, though the shell alone does not.
// TestMain: with PROCMEM_HOLD=1 the test binary is the child that holds
// 64 MiB of touched memory until it is killed (at most ten minutes).
func TestMain(m *testing.M) {
	if os.Getenv("PROCMEM_HOLD") == "1" {
		b := make([]byte, 64<<20)
		for i := range b {
			b[i] = 1
		}
		fmt.Println("ready")
		time.Sleep(10 * time.Minute)
		runtime.KeepAlive(b)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestTreeRSS(t *testing.T) {
	if runtime.GOOS != "linux" {
		if _, ok := TreeRSS(1); ok {
			t.Fatal("TreeRSS knew a size without /proc")
		}
		t.Skip("TreeRSS measures through Linux's /proc only")
	}
	// The shell's child (this test binary, see TestMain) holds the memory.
	cmd := exec.Command("sh", "-c", `"$0"; true`, os.Args[0])
	cmd.Env = append(os.Environ(), "PROCMEM_HOLD=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the shell and its child
		cmd.Wait()
	})
	buf := make([]byte, 6)
	if _, err := out.Read(buf); err != nil || !strings.HasPrefix(string(buf), "ready") {
		t.Fatalf("child: %q %v", buf, err)
	}
	var got int64
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var ok bool
		if got, ok = TreeRSS(cmd.Process.Pid); !ok {
			t.Fatal("TreeRSS: not known")
		}
		if got >= 64<<20 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got < 64<<20 {
		t.Errorf("TreeRSS = %d, want at least 64 MiB (the awk child's string)", got)
	}
	if _, ok := TreeRSS(1 << 30); ok {
		t.Error("TreeRSS of no process is known")
	}
}
