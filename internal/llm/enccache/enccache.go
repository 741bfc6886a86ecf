// Package enccache remembers how an adapter encoded each history message,
// so that a request of step N re-encodes only what step N added: the rest
// of its body is bytes written before. Without it every step re-encodes
// the whole conversation and a long session's per-step cost grows with
// its history.
//
// A message is known by the address of its first content block. History
// messages are never modified once made (a changed message is a new one,
// such as a compaction's summary or a cut tool result), and the cache
// holds the block while it holds the entry, so an address cannot be
// reused for another message while its entry lives. The content length
// and role are checked as well, so a slice grown in place is not taken
// for what it was.
package enccache

import (
	"sync"

	"github.com/reinsdev/reins/internal/llm"
)

// slack is how many entries beyond twice the latest request's messages
// the cache keeps before it sweeps.
const slack = 256

// Cache maps history messages to their encoding, T. Its zero value is
// ready; it is safe for concurrent use (children may share an adapter).
type Cache[T any] struct {
	mu      sync.Mutex
	entries map[*llm.Block]entry[T]
	gen     uint64
}

type entry[T any] struct {
	n    int
	role llm.Role
	v    T
	used uint64
}

// Request is the encoding of one request's messages: Get for each, then
// Done. It is held by one goroutine.
type Request[T any] struct {
	c *Cache[T]
	n int
}

// Begin starts encoding a request.
func (c *Cache[T]) Begin() *Request[T] {
	c.mu.Lock()
	c.gen++
	c.mu.Unlock()
	return &Request[T]{c: c}
}

// Get returns m's encoding, computing it with enc the first time m is
// seen. A message without content is not cached (it costs nothing).
func (r *Request[T]) Get(m llm.Message, enc func(llm.Message) T) T {
	r.n++
	if len(m.Content) == 0 {
		return enc(m)
	}
	key := &m.Content[0]
	c := r.c
	c.mu.Lock()
	e, ok := c.entries[key]
	if ok && e.n == len(m.Content) && e.role == m.Role {
		e.used = c.gen
		c.entries[key] = e
		c.mu.Unlock()
		return e.v
	}
	c.mu.Unlock()
	v := enc(m)
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[*llm.Block]entry[T]{}
	}
	c.entries[key] = entry[T]{n: len(m.Content), role: m.Role, v: v, used: c.gen}
	c.mu.Unlock()
	return v
}

// Done ends the request. When the cache holds more than twice the
// messages of this request (plus slack), entries that no request used
// in the last few generations are dropped: a compacted history's old
// messages, another session's messages that ended.
func (r *Request[T]) Done() {
	c := r.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) <= 2*r.n+slack {
		return
	}
	for k, e := range c.entries {
		if e.used+4 < c.gen {
			delete(c.entries, k)
		}
	}
	// Still too many (many sessions share the adapter): keep only this
	// request's.
	if len(c.entries) > 4*r.n+4*slack {
		for k, e := range c.entries {
			if e.used != c.gen {
				delete(c.entries, k)
			}
		}
	}
}

// Len is the number of entries, for tests.
func (c *Cache[T]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
