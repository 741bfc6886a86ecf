package proc

import "sync"

// Tail keeps the last Max bytes written to it (a child's stderr, for the
// host log). It is safe for concurrent use; the zero Max keeps 4 KiB.
type Tail struct {
	Max int

	mu  sync.Mutex
	buf []byte
}

// DefaultTailBytes is a Tail's size when Max is zero.
const DefaultTailBytes = 4 << 10

// Write never fails.
func (t *Tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	limit := t.Max
	if limit <= 0 {
		limit = DefaultTailBytes
	}
	if len(b) >= limit {
		t.buf = append(t.buf[:0], b[len(b)-limit:]...)
		return len(b), nil
	}
	if over := len(t.buf) + len(b) - limit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, b...)
	return len(b), nil
}

// String is the tail so far.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
