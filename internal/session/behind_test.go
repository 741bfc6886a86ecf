package session

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestSyncBehind: SyncBehind writes what is buffered and fsyncs it in the
// background — one fsync at a time, covering every byte written before
// it — and Close waits for it before closing the file; no goroutine is
// left behind.
func TestSyncBehind(t *testing.T) {
	defer goleak.VerifyNone(t)
	var (
		mu      sync.Mutex
		covered []int64 // the file's size at each fsync
	)
	held := newFirstHeld()
	defer held.release()
	fsync := func(f *os.File) error {
		held.hold()
		fi, err := f.Stat() // fails if Close closed the file meanwhile
		if err != nil {
			return err
		}
		mu.Lock()
		covered = append(covered, fi.Size())
		mu.Unlock()
		return f.Sync()
	}
	l, err := Create(t.TempDir(), Header{ID: "s"}, Options{Now: fixedClock(), Fsync: fsync})
	if err != nil {
		t.Fatal(err)
	}
	writeTurn(t, l, 0) // buffered
	if err := l.SyncBehind(); err != nil {
		t.Fatal(err)
	}
	<-held.started
	written, err := os.Stat(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SyncBehind(); err != nil { // one in flight: nothing more starts
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- l.Close() }()
	// Close must wait for the held fsync: either it returns (wrong) or
	// its goroutine is seen blocked waiting, and then the fsync may go.
	if err, returned := waitBlocked(closed, "session.(*Log).Close("); returned {
		t.Fatalf("Close returned (%v) while the background fsync was still running", err)
	}
	held.release()
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(covered) == 0 || covered[0] != written.Size() {
		t.Fatalf("the background fsync covered %v bytes, want the %d written before it", covered, written.Size())
	}
	if n := held.count(); n > 2 {
		t.Errorf("%d fsyncs: a second SyncBehind started one while the first ran", n)
	}
}

// TestSyncBehindFailure: an fsync that fails in the background is kept
// like a write error: Close (and any later write) returns it.
func TestSyncBehindFailure(t *testing.T) {
	defer goleak.VerifyNone(t)
	var once sync.Once
	fsync := func(f *os.File) (err error) {
		once.Do(func() { err = syscall.EIO })
		if err != nil {
			return err
		}
		return f.Sync()
	}
	l, err := Create(t.TempDir(), Header{ID: "s"}, Options{Now: fixedClock(), Fsync: fsync})
	if err != nil {
		t.Fatal(err)
	}
	writeTurn(t, l, 0)
	if err := l.SyncBehind(); err != nil {
		t.Fatal(err)
	}
	err = l.Close()
	var we *WriteError
	if !errors.As(err, &we) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("Close after a failed background fsync: %v, want a *WriteError of EIO", err)
	}
}

// TestSyncWaitsForBehind: a Sync while a background fsync runs waits for
// it and fails when it failed — Linux tells a writeback error to one fsync
// of a descriptor, so a second fsync's success would say nothing.
func TestSyncWaitsForBehind(t *testing.T) {
	defer goleak.VerifyNone(t)
	held := newFirstHeld()
	fsync := func(f *os.File) error {
		if held.hold() {
			return syscall.EIO
		}
		return f.Sync()
	}
	l, err := Create(t.TempDir(), Header{ID: "s"}, Options{Now: fixedClock(), Fsync: fsync})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	defer held.release() // before Close, which waits for the fsync
	writeTurn(t, l, 0)
	if err := l.SyncBehind(); err != nil {
		t.Fatal(err)
	}
	<-held.started
	synced := make(chan error, 1)
	go func() { synced <- l.Sync() }()
	if err, returned := waitBlocked(synced, "session.(*Log).Sync("); returned {
		t.Fatalf("Sync returned (%v) while the background fsync was still running", err)
	}
	held.release()
	if err := <-synced; !errors.Is(err, syscall.EIO) {
		t.Fatalf("Sync during a background fsync that failed: %v, want EIO", err)
	}
}

// waitBlocked waits until a goroutine is seen blocked on a channel inside
// fn, or until done delivers (returned): what the caller then learns does
// not depend on how fast either side ran.
func waitBlocked(done <-chan error, fn string) (err error, returned bool) {
	for {
		select {
		case err := <-done:
			return err, true
		case <-time.After(10 * time.Millisecond):
			buf := make([]byte, 1<<20)
			for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
				if strings.Contains(g, "[chan receive") && strings.Contains(g, fn) {
					return nil, false
				}
			}
		}
	}
}

// firstHeld counts the calls of a test's fsync hook and holds the first
// one until release, so that a test can act while a background fsync runs.
type firstHeld struct {
	started chan struct{} // closed when the first call arrives
	gate    chan struct{} // closed by release
	once    sync.Once
	mu      sync.Mutex
	calls   int
}

func newFirstHeld() *firstHeld {
	return &firstHeld{started: make(chan struct{}), gate: make(chan struct{})}
}

// hold counts a call; the first one waits for release and reports true.
func (h *firstHeld) hold() (first bool) {
	h.mu.Lock()
	h.calls++
	first = h.calls == 1
	h.mu.Unlock()
	if first {
		close(h.started)
		<-h.gate
	}
	return first
}

// release lets the held call go; it may be called more than once.
func (h *firstHeld) release() { h.once.Do(func() { close(h.gate) }) }

func (h *firstHeld) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls
}

// TestSyncBehindOnlyWhenItSaves: SyncBehind starts an fsync for a new
// file (its creation is most of the cost), then only once BehindMin bytes
// are unsynced: for less, the Sync to come costs as much either way.
func TestSyncBehindOnlyWhenItSaves(t *testing.T) {
	defer goleak.VerifyNone(t)
	allow := make(chan struct{}, 8) // each fsync takes a token: one started stays running until given one
	fsync := func(f *os.File) error {
		<-allow
		return f.Sync()
	}
	l, err := Create(t.TempDir(), Header{ID: "s"}, Options{Now: fixedClock(), Fsync: fsync})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	defer func() { allow <- struct{}{} }() // Close's fsync
	for _, c := range []struct {
		what   string
		data   any
		behind bool
	}{
		{"new file", TurnStart{}, true},
		{"small write", ToolResult{Content: "small"}, false},
		{"large write", ToolResult{Content: strings.Repeat("x", BehindMin)}, true},
		{"small again", ToolResult{Content: "small"}, false},
	} {
		if _, err := l.Append(TypeToolResult, c.data); err != nil {
			t.Fatal(err)
		}
		if err := l.SyncBehind(); err != nil {
			t.Fatal(err)
		}
		l.mu.Lock()
		started := l.behind != nil // its fsync waits for a token: it cannot have ended
		l.mu.Unlock()
		if started != c.behind {
			t.Errorf("%s: SyncBehind started an fsync: %v, want %v", c.what, started, c.behind)
		}
		allow <- struct{}{}
		allow <- struct{}{}
		if err := l.Sync(); err != nil {
			t.Fatal(err)
		}
		for len(allow) > 0 { // the tokens nobody took
			<-allow
		}
	}
}
