package tui

import "github.com/reinsdev/reins/internal/session"

// offer is the harness's ObserveRemote hook, which must not block: an
// out-of-process child's event is dropped when the feed is full (the
// screen is that far behind; the row shows only the latest activity, and
// the child's result and subagent/end come through the parent's log).
func (f *feed) offer(h session.Header, e session.Event) {
	f.mu.Lock()
	if f.closed || len(f.items) >= maxPending {
		f.mu.Unlock()
		return
	}
	f.items = append(f.items, item{header: h, event: e})
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}
