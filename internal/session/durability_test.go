package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm"
)

// fakeClock collects the group commits a Log arms; fire runs them, so a
// test decides when "250 ms" have passed.
type fakeClock struct {
	mu     sync.Mutex
	timers []*fakeTimer
}

type fakeTimer struct {
	c       *fakeClock
	mu      sync.Mutex
	d       time.Duration
	f       func()
	stopped bool
}

func (t *fakeTimer) Stop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	t := &fakeTimer{c: c, d: d, f: f}
	c.add(t)
	return t
}

func (c *fakeClock) add(t *fakeTimer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(c.timers, t) {
		c.timers = append(c.timers, t)
	}
}

// Reset re-arms the timer, as time.Timer.Reset does.
func (t *fakeTimer) Reset(d time.Duration) bool {
	was := t.Stop()
	t.mu.Lock()
	t.d, t.stopped = d, false
	t.mu.Unlock()
	t.c.add(t)
	return was
}

// armed returns the delays of the timers not yet fired or stopped.
func (c *fakeClock) armed() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ds []time.Duration
	for _, t := range c.timers {
		t.mu.Lock()
		if !t.stopped {
			ds = append(ds, t.d)
		}
		t.mu.Unlock()
	}
	return ds
}

// fire runs every armed timer, as the real clock would once their delay
// has passed.
func (c *fakeClock) fire() {
	c.mu.Lock()
	ts := c.timers
	c.timers = nil
	c.mu.Unlock()
	for _, t := range ts {
		if t.Stop() {
			t.f()
		}
	}
}

func fileLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

func chunk(s string) AssistantChunk {
	return AssistantChunk{Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Delta: s}}
}

// TestGroupCommit: streamed events reach the file without an explicit
// flush, once CommitDelay has passed after the first of them or once
// FlushAt bytes are buffered; Flush and Sync write at once.
func TestGroupCommit(t *testing.T) {
	clk := &fakeClock{}
	l, err := Create(t.TempDir(), Header{ID: "g"}, Options{Now: fixedClock(), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if n := fileLines(t, l.Path()); n != 1 {
		t.Fatalf("after Create the file has %d lines, want the header", n)
	}
	for range 3 {
		if _, err := l.Append(TypeAssistantChunk, chunk("word ")); err != nil {
			t.Fatal(err)
		}
	}
	if n := fileLines(t, l.Path()); n != 1 {
		t.Fatalf("chunks written before their commit: %d lines", n)
	}
	if got := clk.armed(); len(got) != 1 || got[0] != CommitDelay {
		t.Fatalf("armed commits %v, want one of %v", got, CommitDelay)
	}
	clk.fire()
	if n := fileLines(t, l.Path()); n != 4 {
		t.Fatalf("after the commit the file has %d lines, want 4", n)
	}
	if got := clk.armed(); len(got) != 0 {
		t.Fatalf("commits armed with nothing buffered: %v", got)
	}

	// Size: a stream faster than the clock is written every FlushAt bytes.
	big := strings.Repeat("x", 1024)
	for range FlushAt / 1024 {
		if _, err := l.Append(TypeAssistantChunk, chunk(big)); err != nil {
			t.Fatal(err)
		}
	}
	if n := fileLines(t, l.Path()); n <= 4 {
		t.Fatalf("%d bytes buffered and nothing written", FlushAt)
	}

	// Flush writes now and disarms the commit.
	if _, err := l.Append(TypeStepStart, StepStart{}); err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := clk.armed(); len(got) != 0 {
		t.Fatalf("commit still armed after Flush: %v", got)
	}
	ld, err := Load(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if last := ld.Events[len(ld.Events)-1]; last.Type != TypeStepStart {
		t.Fatalf("last event on disk after Flush is %s", last.Type)
	}
}

// TestOneWriter: a session held by a Log cannot be reopened — by this
// process or another — until that Log is closed; the refusal names the
// holder's pid. Readers need no lock.
func TestOneWriter(t *testing.T) {
	root := t.TempDir()
	l, err := Create(root, Header{ID: "busy"}, Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	writeTurn(t, l, 0)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"first", "second"} {
		_, _, err := Reopen(l.Path(), Options{})
		var ie *InUseError
		if !errors.As(err, &ie) {
			t.Fatalf("%s Reopen of a held session: %v, want *InUseError", name, err)
		}
		if ie.ID != "busy" || ie.PID != os.Getpid() {
			t.Errorf("InUseError = %+v, want id busy, pid %d", ie, os.Getpid())
		}
		want := "session busy is in use by another reins process (pid " + strconv.Itoa(os.Getpid()) + ")"
		if err.Error() != want {
			t.Errorf("message %q, want %q", err, want)
		}
	}
	// A reader loads the live session without a lock and without error,
	// even with a half-written line at its end.
	raw, err := os.OpenFile(l.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	raw.WriteString(`{"type":"step/sta`)
	raw.Close()
	ld, err := Load(l.Path())
	if err != nil {
		t.Fatalf("live log does not load: %v", err)
	}
	if len(ld.Events) != 9 || ld.Repair.DroppedBytes == 0 {
		t.Fatalf("live load: %d events, repair %+v", len(ld.Events), ld.Repair)
	}
	if pid := Writer(l.Path()); pid != os.Getpid() {
		t.Errorf("Writer of a held log = %d, want %d", pid, os.Getpid())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if pid := Writer(l.Path()); pid != 0 {
		t.Errorf("Writer of a closed log = %d, want 0", pid)
	}
	l2, ld2, err := Reopen(l.Path(), Options{})
	if err != nil {
		t.Fatalf("Reopen after Close: %v", err)
	}
	defer l2.Close()
	if len(ld2.Events) != 9 {
		t.Fatalf("reopened %d events", len(ld2.Events))
	}
}

// TestVanishedLog: a log whose file was removed or replaced under it fails
// its next flush with ErrVanished, and every write after that.
func TestVanishedLog(t *testing.T) {
	for _, tc := range []struct {
		name     string
		breakLog func(t *testing.T, l *Log)
	}{
		{"directory removed", func(t *testing.T, l *Log) {
			if err := os.RemoveAll(l.Dir()); err != nil {
				t.Fatal(err)
			}
		}},
		{"file replaced", func(t *testing.T, l *Log) {
			other := filepath.Join(l.Dir(), "other")
			if err := os.WriteFile(other, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(other, l.Path()); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{}
			l, err := Create(t.TempDir(), Header{ID: "v"}, Options{Now: fixedClock(), Clock: clk})
			if err != nil {
				t.Fatal(err)
			}
			tc.breakLog(t, l)
			if err := l.Sync(); !errors.Is(err, ErrVanished) {
				t.Fatalf("Sync with nothing buffered: %v, want ErrVanished", err)
			}
			if _, err := l.Append(TypeTurnStart, TurnStart{}); !errors.Is(err, ErrVanished) {
				t.Fatalf("Append after the failure: %v, want ErrVanished", err)
			}
			var we *WriteError
			if err := l.Close(); !errors.As(err, &we) || !errors.Is(err, ErrVanished) {
				t.Fatalf("Close: %v, want the *WriteError", err)
			}
		})
	}
	// The group commit notices too; the error waits for the next call.
	clk := &fakeClock{}
	l, err := Create(t.TempDir(), Header{ID: "v"}, Options{Now: fixedClock(), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Append(TypeAssistantChunk, chunk("a")); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(l.Dir())
	clk.fire()
	if err := l.Err(); !errors.Is(err, ErrVanished) {
		t.Fatalf("Err after a failed group commit: %v", err)
	}
	if err := l.Flush(); !errors.Is(err, ErrVanished) {
		t.Fatalf("Flush after a failed group commit: %v", err)
	}
}

// TestWriteThrough: with WriteThrough every event is in the file before
// the observer hears of it, so an observer that tells another process
// never tells more than the file holds.
func TestWriteThrough(t *testing.T) {
	var path string
	var behind []int64
	l, err := Create(t.TempDir(), Header{ID: "w"}, Options{Now: fixedClock(), Clock: &fakeClock{}, WriteThrough: true,
		Observe: func(_ Header, e Event) {
			if n := fileLines(t, path) - 1; int64(n) <= e.Seq {
				behind = append(behind, e.Seq)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	path = l.Path()
	defer l.Close()
	writeTurn(t, l, 0)
	if len(behind) > 0 {
		t.Errorf("observed before written: seq %v", behind)
	}
}

// TestHolderNamed: the refusal names the holder's pid from the kernel's
// lock table where there is one — and then no writer.pid is written — and
// from the writer.pid sidecar where there is none.
func TestHolderNamed(t *testing.T) {
	if _, err := os.Stat(procLocksPath); err != nil {
		t.Skip("explicit: no /proc/locks on this system; the sidecar case below is the only one")
	}
	for _, tc := range []struct {
		name    string
		locks   string
		sidecar bool
	}{
		{"lock table", procLocksPath, false},
		{"sidecar", filepath.Join(t.TempDir(), "no-locks"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(p string) { procLocksPath = p }(procLocksPath)
			procLocksPath = tc.locks
			l, err := Create(t.TempDir(), Header{ID: "held"}, Options{Now: fixedClock()})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			_, err = os.Stat(filepath.Join(l.Dir(), pidFile))
			if got := err == nil; got != tc.sidecar {
				t.Errorf("writer.pid written: %v, want %v (stat: %v)", got, tc.sidecar, err)
			}
			_, _, err = Reopen(l.Path(), Options{})
			var ie *InUseError
			if !errors.As(err, &ie) || ie.PID != os.Getpid() {
				t.Errorf("Reopen of a held session: %v, want *InUseError with pid %d", err, os.Getpid())
			}
		})
	}
}

// TestMayHold: a new Log holds only what it wrote — appended or copied —
// and a reopened one may hold anything.
func TestMayHold(t *testing.T) {
	l, err := Create(t.TempDir(), Header{ID: "s"}, Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	if l.MayHold(TypeSubagentStart) {
		t.Error("a new log may hold subagent/start before any was written")
	}
	writeTurn(t, l, 0)
	if l.MayHold(TypeSubagentStart) || !l.MayHold(TypeTurnStart) {
		t.Error("after a turn: want turn/start held, subagent/start not")
	}
	if _, err := l.AppendCopy([]Event{{Type: TypeSubagentStart, Seq: 7, Data: []byte(`{"run_id":"run-1"}`)}}); err != nil {
		t.Fatal(err)
	}
	if !l.MayHold(TypeSubagentStart) {
		t.Error("a copied subagent/start is not reported")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	r, _, err := Reopen(l.Path(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.MayHold(TypeContextCompacted) {
		t.Error("a reopened log must say it may hold any type")
	}
}
