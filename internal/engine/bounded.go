package engine

import "sync"

// bounded is a map that forgets its oldest entries beyond max entries or
// maxCost in all (cost: what the caller says an entry weighs): the
// engine's memory of settled runs must not grow with a session's length.
type bounded[V any] struct {
	mu      sync.Mutex
	max     int
	maxCost int // 0: no bound on the cost
	m       map[string]boundedEntry[V]
	order   []string // keys, oldest first (a key set again moves last)
	cost    int
}

type boundedEntry[V any] struct {
	v    V
	cost int
}

func newBounded[V any](max, maxCost int) *bounded[V] {
	return &bounded[V]{max: max, maxCost: maxCost, m: map[string]boundedEntry[V]{}}
}

// put sets k to v, weighing cost; an entry heavier than maxCost is not
// kept (and k's older value is forgotten).
func (b *bounded[V]) put(k string, v V, cost int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.remove(k)
	if b.maxCost > 0 && cost > b.maxCost {
		return
	}
	b.m[k] = boundedEntry[V]{v, cost}
	b.order = append(b.order, k)
	b.cost += cost
	for len(b.m) > b.max || (b.maxCost > 0 && b.cost > b.maxCost) {
		b.remove(b.order[0])
	}
}

// get returns k's value.
func (b *bounded[V]) get(k string) (V, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.m[k]
	return e.v, ok
}

// take returns k's value and forgets it.
func (b *bounded[V]) take(k string) (V, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.m[k]
	b.remove(k)
	return e.v, ok
}

func (b *bounded[V]) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}

// remove forgets k. b.mu is held.
func (b *bounded[V]) remove(k string) {
	e, ok := b.m[k]
	if !ok {
		return
	}
	delete(b.m, k)
	b.cost -= e.cost
	for i, o := range b.order {
		if o == k {
			b.order = append(b.order[:i], b.order[i+1:]...)
			break
		}
	}
}
