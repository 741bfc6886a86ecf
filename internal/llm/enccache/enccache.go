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
// ready; it is safe for concurrent use (children may share an adapter),
// one request encoding at a time.
type Cache[T any] struct {
	mu      sync.Mutex
	entries map[*llm.Block]*entry[T]
	gen     uint64
	// last is the previous request's entries in order: a request that
	// extends it (every step of a turn) finds its messages by position,
	// without a map lookup. lastGen is that request's generation.
	last    []*entry[T]
	lastGen uint64
}

type entry[T any] struct {
	key  *llm.Block
	n    int
	role llm.Role
	v    T
	used uint64
}

func (e *entry[T]) is(m llm.Message) bool {
	return e.key == &m.Content[0] && e.n == len(m.Content) && e.role == m.Role
}

// Request is the encoding of one request's messages: Get for each, then
// Done. It holds the cache until Done.
type Request[T any] struct {
	c    *Cache[T]
	seen []*entry[T]
	// prefix counts the leading messages found by position in the
	// previous request; prevGen and prevN are that request's generation
	// and length.
	prefix       int
	prevGen, gen uint64
	prevN        int
	// untracked: a message without content was encoded, outside the
	// cache's view of positions.
	untracked bool
}

// Begin starts encoding a request; Done must follow.
func (c *Cache[T]) Begin() *Request[T] {
	c.mu.Lock()
	c.gen++
	return &Request[T]{c: c, seen: make([]*entry[T], 0, len(c.last)+2), prevGen: c.lastGen, gen: c.gen, prevN: len(c.last)}
}

// Gen identifies this request among the cache's.
func (r *Request[T]) Gen() uint64 { return r.gen }

// PrevLen is the number of messages of the previous request.
func (r *Request[T]) PrevLen() int { return r.prevN }

// Extends reports whether the messages so far began with every message
// of the previous request, the one of generation gen, in order: an
// encoder that kept that request's bytes may append to them.
func (r *Request[T]) Extends(gen uint64) bool {
	return gen != 0 && gen == r.prevGen && r.prefix == r.prevN && !r.untracked
}

// Get returns m's encoding, computing it with enc the first time m is
// seen. A message without content is not cached (it costs nothing).
func (r *Request[T]) Get(m llm.Message, enc func(llm.Message) T) T {
	if len(m.Content) == 0 {
		r.untracked = true
		return enc(m)
	}
	c := r.c
	i := len(r.seen)
	if i < len(c.last) && c.last[i].is(m) {
		if r.prefix == i {
			r.prefix++
		}
		r.seen = append(r.seen, c.last[i])
		return c.last[i].v
	}
	key := &m.Content[0]
	e, ok := c.entries[key]
	if ok && e.is(m) {
		e.used = c.gen
		r.seen = append(r.seen, e)
		return e.v
	}
	if c.entries == nil {
		c.entries = map[*llm.Block]*entry[T]{}
	}
	e = &entry[T]{key: key, n: len(m.Content), role: m.Role, v: enc(m), used: c.gen}
	c.entries[key] = e
	r.seen = append(r.seen, e)
	return e.v
}

// Done ends the request and releases the cache. When the cache holds more
// than twice the messages of this request (plus slack), entries that no
// request used in the last few generations are dropped: a compacted
// history's old messages, another session's messages that ended.
func (r *Request[T]) Done() {
	c := r.c
	defer c.mu.Unlock()
	c.last, c.lastGen = r.seen, r.gen
	if len(c.entries) <= 2*len(r.seen)+slack {
		return
	}
	for _, e := range r.seen {
		e.used = c.gen
	}
	for k, e := range c.entries {
		if e.used+4 < c.gen {
			delete(c.entries, k)
		}
	}
	// Still too many (many sessions share the adapter): keep only this
	// request's.
	if len(c.entries) > 4*len(r.seen)+4*slack {
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
