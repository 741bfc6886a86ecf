package childproc

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// A child that keeps sending is never stalled, however long it runs.
func TestProgressKeepsAStallWatchQuiet(t *testing.T) {
	l := Start(0, nil)
	var told atomic.Int32
	l.WatchStall(2*time.Second, func() { told.Add(1) })
	stop := make(chan struct{})
	l.Go(func() { <-stop })
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		l.Progress()
		time.Sleep(10 * time.Millisecond)
	}
	if l.Stalled() || told.Load() != 0 {
		t.Fatalf("a child that sent every 10ms was taken for stalled (cause %v)", l.Cause())
	}
	close(stop)
	l.Dispose(nil, nil)
}

// A silent child is stopped with ErrStalled, and onStall hears of it
// first, once.
func TestSilenceStalls(t *testing.T) {
	l := Start(0, nil)
	var told atomic.Int32
	var causeWhenTold atomic.Value
	l.WatchStall(50*time.Millisecond, func() {
		told.Add(1)
		causeWhenTold.Store(l.Cause() == nil)
	})
	l.Go(func() { <-l.Context().Done() })
	select {
	case <-l.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a silent child was never stopped")
	}
	if !l.Stalled() || context.Cause(l.Context()) != ErrStalled {
		t.Fatalf("cause %v, want ErrStalled", l.Cause())
	}
	if told.Load() != 1 || causeWhenTold.Load() != true {
		t.Fatalf("onStall ran %d times (before the stop: %v), want once, first", told.Load(), causeWhenTold.Load())
	}
	l.Dispose(nil, nil)
}

// A zero timeout watches nothing; a run that settled is not stopped later.
func TestStallWatchOffAndAfterSettle(t *testing.T) {
	l := Start(0, nil)
	l.WatchStall(0, nil)
	l.Go(func() {})
	<-l.Done()
	l2 := Start(0, nil)
	l2.WatchStall(30*time.Millisecond, nil)
	l2.Go(func() {})
	<-l2.Done()
	time.Sleep(100 * time.Millisecond)
	if l.Stalled() || l2.Stalled() {
		t.Fatal("a settled or unwatched run was stopped as stalled")
	}
}
