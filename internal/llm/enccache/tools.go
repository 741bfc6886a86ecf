package enccache

import (
	"bytes"
	"slices"
	"sync"

	"github.com/reinsdev/reins/internal/llm"
)

// Tools remembers the encoding of the latest tool list. Every step of a
// session sends the same tools, and encoding them is most of a short
// request's cost: encoding/json validates and compacts each raw schema,
// about 140 µs for the eighteen built-in tools' 14 KB
// (BenchmarkEncodeRequest in package responses). The zero value is ready;
// it is safe for concurrent use.
type Tools struct {
	mu    sync.Mutex
	specs []llm.ToolSpec // a copy of the list last encoded
	enc   []byte
}

// Get returns enc(specs), or the bytes it returned for an equal list last
// time. The result is shared: callers copy it, never change it.
func (t *Tools) Get(specs []llm.ToolSpec, enc func([]llm.ToolSpec) ([]byte, error)) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.enc != nil && slices.EqualFunc(t.specs, specs, sameSpec) {
		return t.enc, nil
	}
	b, err := enc(specs)
	if err != nil {
		return nil, err
	}
	// A copy: the caller's schemas are its own to change afterwards.
	t.specs = t.specs[:0]
	for _, s := range specs {
		s.Parameters = bytes.Clone(s.Parameters)
		t.specs = append(t.specs, s)
	}
	t.enc = b
	return b, nil
}

func sameSpec(a, b llm.ToolSpec) bool {
	return a.Name == b.Name && a.Description == b.Description && bytes.Equal(a.Parameters, b.Parameters)
}
