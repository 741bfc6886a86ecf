// Package batch is a bounded queue that one consumer drains whole: the
// screen's feed, where a fast stream must cost one screen update per
// batch, not per item, and a full queue must slow the producers rather
// than drop what they report.
package batch

import "sync"

// Queue holds at most max items for its consumer, in order.
type Queue[T any] struct {
	mu     sync.Mutex
	room   *sync.Cond
	items  []T
	max    int
	wake   chan struct{} // 1-buffered: items are pending
	closed bool
	done   chan struct{} // closed by Close
}

// New is an empty queue of at most max items.
func New[T any](max int) *Queue[T] {
	q := &Queue[T]{max: max, wake: make(chan struct{}, 1), done: make(chan struct{})}
	q.room = sync.NewCond(&q.mu)
	return q
}

// Push adds it, waiting while the queue is full; after Close it drops it
// and reports false.
func (q *Queue[T]) Push(it T) bool {
	q.mu.Lock()
	for len(q.items) >= q.max && !q.closed {
		q.room.Wait()
	}
	return q.add(it)
}

// Offer is Push for a producer that must not block: it drops it when the
// queue is full (or closed) and reports false.
func (q *Queue[T]) Offer(it T) bool {
	q.mu.Lock()
	if len(q.items) >= q.max {
		q.mu.Unlock()
		return false
	}
	return q.add(it)
}

// add appends it under q.mu (held on entry, released on return).
func (q *Queue[T]) add(it T) bool {
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, it)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

// Wake is ready when items are pending.
func (q *Queue[T]) Wake() <-chan struct{} { return q.wake }

// Done is closed by Close.
func (q *Queue[T]) Done() <-chan struct{} { return q.done }

// Take returns everything pending (nil when nothing is) and lets waiting
// producers in.
func (q *Queue[T]) Take() []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	its := q.items
	q.items = nil
	q.room.Broadcast()
	return its
}

// Close makes every waiting and later Push or Offer drop its item, and
// closes Done: the consumer is gone.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		close(q.done)
		q.room.Broadcast()
	}
}
