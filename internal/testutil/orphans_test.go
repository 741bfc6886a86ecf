package testutil

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// fakeTB records what MarkChildren's cleanup reports.
type fakeTB struct {
	testing.TB
	name     string
	cleanups []func()
	errors   []string
}

func (f *fakeTB) Helper()                   {}
func (f *fakeTB) Name() string              { return f.name }
func (f *fakeTB) Cleanup(fn func())         { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Errorf(s string, a ...any) { f.errors = append(f.errors, fmt.Sprintf(s, a...)) }
func (f *fakeTB) Error(a ...any)            { f.errors = append(f.errors, fmt.Sprint(a...)) }

func (f *fakeTB) runCleanups() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func TestMarkChildrenFindsAndClears(t *testing.T) {
	defer func(d time.Duration) { OrphanWait = d }(OrphanWait)
	OrphanWait = 300 * time.Millisecond
	ft := &fakeTB{TB: t, name: "TestLeaky"}
	entry := MarkChildren(ft)
	if !strings.HasPrefix(entry, MarkEnv+"=") || !strings.HasSuffix(entry, "/TestLeaky") {
		t.Fatalf("entry %q", entry)
	}
	mark := strings.TrimPrefix(entry, MarkEnv+"=")

	// A marked sleep and its marked grandchild, both found by the scan.
	cmd := exec.Command("bash", "-c", "sleep 30 & wait")
	cmd.Env = append(os.Environ(), entry)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var found []Proc
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if found = Marked(mark); len(found) == 2 {
			break
		}
	}
	if len(found) != 2 {
		cmd.Process.Kill()
		t.Fatalf("scan found %v, want bash and its sleep", found)
	}
	for _, p := range found {
		if p.Mark != mark {
			t.Errorf("found %v with mark %q, want %q", p, p.Mark, mark)
		}
	}
	if other := Marked(mark + "-other"); len(other) != 0 {
		t.Errorf("a different mark matched: %v", other)
	}

	// Left running, the cleanup names them.
	saved := found
	ft.runCleanups()
	if len(ft.errors) != 1 || !strings.Contains(ft.errors[0], "sleep 30") {
		t.Errorf("cleanup reported %q, want the sleep named", ft.errors)
	}

	// Once they are gone, the check passes.
	for _, p := range saved {
		if pr, err := os.FindProcess(p.PID); err == nil {
			pr.Kill()
		}
	}
	cmd.Wait()
	if left := LeftBehind(mark, OrphanWait); len(left) != 0 {
		t.Errorf("after kill, still marked: %v", left)
	}
}

// TestClean checks the end-of-suite verdict: a marked process still alive
// turns a passing exit code into 1; once it is gone the code stands.
func TestClean(t *testing.T) {
	defer func(d time.Duration, w io.Writer) { OrphanWait, cleanOut = d, w }(OrphanWait, cleanOut)
	var report strings.Builder
	OrphanWait, cleanOut = 300*time.Millisecond, &report
	mark := "testutil-clean/" + t.Name()
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), MarkEnv+"="+mark+"/child")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); len(Marked(mark)) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the marked sleep never showed up")
		}
	}
	if code := Clean(mark, 0); code != 1 {
		t.Errorf("Clean with a marked process alive = %d, want 1", code)
	}
	if !strings.Contains(report.String(), "sleep 30") {
		t.Errorf("Clean's report %q does not name the sleep", report.String())
	}
	if code := Clean(mark, 3); code != 3 {
		t.Errorf("Clean kept code %d, want the failing 3", code)
	}
	cmd.Process.Kill()
	cmd.Process.Wait()
	if code := Clean(mark, 0); code != 0 {
		t.Errorf("Clean after the process exited = %d, want 0", code)
	}
}

func TestMarkOf(t *testing.T) {
	env := []byte("A=1\x00" + MarkEnv + "=pkg/12/TestX\x00B=2\x00")
	if v, ok := markOf(env); !ok || v != "pkg/12/TestX" {
		t.Errorf("markOf = %q %v", v, ok)
	}
	if _, ok := markOf([]byte("NOT_" + MarkEnv + "=x\x00")); ok {
		t.Error("a variable merely ending in the name matched")
	}
}
