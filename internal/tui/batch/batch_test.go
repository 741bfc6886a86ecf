package batch

import (
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTakeInOrder(t *testing.T) {
	q := New[int](3)
	if q.Take() != nil {
		t.Fatal("empty queue took items")
	}
	q.Push(1)
	q.Push(2)
	select {
	case <-q.Wake():
	default:
		t.Fatal("no wake after a push")
	}
	if got := q.Take(); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("took %v", got)
	}
}

func TestFullPushWaitsOfferDrops(t *testing.T) {
	q := New[int](2)
	q.Push(1)
	q.Push(2)
	if q.Offer(3) {
		t.Fatal("Offer added to a full queue")
	}
	pushed := make(chan bool)
	go func() { pushed <- q.Push(4) }()
	// The push waits for room; once the batch is taken it goes in.
	if got := q.Take(); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("took %v", got)
	}
	select {
	case ok := <-pushed:
		if !ok {
			t.Fatal("push after Take dropped")
		}
	case <-time.After(time.Minute):
		t.Fatal("push never got room")
	}
	if got := q.Take(); !slices.Equal(got, []int{4}) {
		t.Fatalf("took %v", got)
	}
}

func TestCloseReleasesWaitingPush(t *testing.T) {
	q := New[int](1)
	q.Push(1)
	pushed := make(chan bool)
	go func() { pushed <- q.Push(2) }()
	q.Close()
	select {
	case ok := <-pushed:
		if ok {
			t.Fatal("push after Close kept its item")
		}
	case <-time.After(time.Minute):
		t.Fatal("Close left a push waiting")
	}
	select {
	case <-q.Done():
	default:
		t.Fatal("Done not closed")
	}
	if q.Push(3) || q.Offer(3) {
		t.Fatal("closed queue took an item")
	}
	q.Close() // twice is fine
}
