package mock

import (
	"bytes"
	"hash/fnv"
)

// The mock simulates Anthropic's prompt cache, so that a benchmark or a
// test can see what reins's cache breakpoints save: a request's prefix up
// to a cache_control mark is a cache write the first time it is sent and a
// cache read when a later request starts with the same bytes. The prefix
// runs from the first of system, tools and messages (the order the body is
// written in) with the marks themselves left out, since a mark moves from
// request to request. It applies only when the script gives no usage, and
// counts four bytes a token like the rest of the estimate.

// maxCached bounds the prefixes remembered (oldest forgotten first).
const maxCached = 4096

var cacheMark = []byte(`"cache_control":{"type":"ephemeral"}`)

// prefix is one breakpoint's prefix: its hash and length in bytes.
type prefix struct {
	hash uint64
	size int
}

// breakpoints returns the prefixes of body's cache_control marks, in
// order.
func breakpoints(body []byte) []prefix {
	if !bytes.Contains(body, cacheMark) {
		return nil
	}
	start := len(body)
	for _, k := range []string{`"system":`, `"tools":`, `"messages":`} {
		if i := bytes.Index(body, []byte(k)); i >= 0 && i < start {
			start = i
		}
	}
	if start == len(body) {
		return nil
	}
	h := fnv.New64a()
	var out []prefix
	size := 0
	rest := body[start:]
	for {
		i := bytes.Index(rest, cacheMark)
		if i < 0 {
			return out
		}
		seg := rest[:i]
		// The mark's own comma is part of the mark.
		seg = bytes.TrimSuffix(seg, []byte(","))
		h.Write(seg)
		size += len(seg)
		out = append(out, prefix{hash: h.Sum64(), size: size})
		rest = rest[i+len(cacheMark):]
	}
}

// promptCache is the set of prefixes sent before.
type promptCache struct {
	seen  map[uint64]bool
	order []uint64
}

// usage splits input tokens into uncached, read and written for a
// request with the given breakpoints; the caller holds the server's lock.
func (c *promptCache) usage(bps []prefix, input int) (uncached, read, write int) {
	tok := func(n int) int { return (n + 3) / 4 }
	if len(bps) == 0 {
		return input, 0, 0
	}
	if c.seen == nil {
		c.seen = map[uint64]bool{}
	}
	readBytes := 0
	for _, p := range bps {
		if c.seen[p.hash] {
			readBytes = p.size
		}
	}
	last := bps[len(bps)-1].size
	read = min(tok(readBytes), input)
	write = min(max(tok(last)-read, 0), input-read)
	for _, p := range bps {
		if !c.seen[p.hash] {
			c.seen[p.hash] = true
			c.order = append(c.order, p.hash)
		}
	}
	for len(c.order) > maxCached {
		delete(c.seen, c.order[0])
		c.order = c.order[1:]
	}
	return input - read - write, read, write
}
