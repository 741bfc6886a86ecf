package testutil

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TemporalCLIVersion is the temporal CLI whose `server start-dev` the
// engine tests run; scripts/test builds it once into TemporalPath.
const TemporalCLIVersion = "v1.5.1"

// SkipTemporalEnv names the variable a user sets to 1 to skip, explicitly,
// the tests that need the Temporal dev server (REINS_TEST_SKIP_PEERS=1
// skips them too). Without either, a missing server fails the test.
const SkipTemporalEnv = "REINS_TEST_SKIP_TEMPORAL"

// TemporalPath is where scripts/test caches the temporal CLI, outside the
// repository: $REINS_TEST_TEMPORAL when set, else
// <user cache dir>/reins-test/temporal-<version>/temporal.
func TemporalPath() string {
	if p := os.Getenv("REINS_TEST_TEMPORAL"); p != "" {
		return p
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = filepath.Join(os.TempDir(), "reins-cache")
	}
	return filepath.Join(dir, "reins-test", "temporal-"+TemporalCLIVersion, "temporal")
}

// Temporal returns the temporal CLI, or ends the test: skipped when the
// user asked for it (SkipTemporalEnv or SkipPeersEnv), failed otherwise.
func Temporal(t testing.TB) string {
	t.Helper()
	p := TemporalPath()
	if _, err := os.Stat(p); err == nil {
		return p
	}
	for _, env := range []string{SkipTemporalEnv, SkipPeersEnv} {
		if os.Getenv(env) == "1" {
			t.Skipf("the temporal CLI is not at %s (skipped: %s=1)", p, env)
		}
	}
	t.Fatalf("the temporal CLI is not at %s: run scripts/test, which builds it once (or set %s=1 to skip these tests)", p, SkipTemporalEnv)
	return ""
}

// freePort is a loopback port nothing listens on right now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// StartTemporal starts `temporal server start-dev` on free loopback ports
// with its database in a temporary folder, waits until its frontend
// accepts connections, and returns its address and stop, which stops the
// server (SIGTERM, then SIGKILL to its group) and is idempotent. It runs
// at the latest when t ends; a test defers it to stop the server before
// MarkChildren's checks. The server carries mark (an entry of
// MarkChildren) so that a server left running fails the test.
func StartTemporal(t testing.TB, mark string) (addr string, stop func()) {
	t.Helper()
	bin := Temporal(t)
	port := freePort(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "server", "start-dev", "--ip", "127.0.0.1", "--headless",
		"--port", strconv.Itoa(port), "--http-port", strconv.Itoa(freePort(t)), "--metrics-port", strconv.Itoa(freePort(t)),
		"--db-filename", filepath.Join(dir, "temporal.db"), "--log-level", "error")
	cmd.Env = append(os.Environ(), mark)
	out, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = serverAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); out.Close(); close(done) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
			}
		})
	}
	t.Cleanup(stop)
	addr = "127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(90 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return addr, stop
		}
		select {
		case <-done:
			b, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			t.Fatalf("temporal server start-dev exited: %s", tail(b))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("temporal server start-dev not listening on %s after 90 s", addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return fmt.Sprintf("%q", b)
}
