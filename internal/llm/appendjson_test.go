package llm

import (
	"testing"

	"github.com/reinsdev/reins/internal/jsonw/jsonwtest"
)

func TestAppendJSON(t *testing.T) {
	const n = 3000
	noErr := func(f func([]byte) []byte) func() ([]byte, error) {
		return func() ([]byte, error) { return f(nil), nil }
	}
	jsonwtest.Check(t, n, func(b Block) ([]byte, error) { return noErr(b.AppendJSON)() })
	jsonwtest.Check(t, n, func(im Image) ([]byte, error) { return noErr(im.AppendJSON)() })
	jsonwtest.Check(t, n, func(m Message) ([]byte, error) { return noErr(m.AppendJSON)() })
	jsonwtest.Check(t, n, func(f Finish) ([]byte, error) { return noErr(f.AppendJSON)() })
	jsonwtest.Check(t, n, func(u Usage) ([]byte, error) { return u.AppendJSON(nil) })
	jsonwtest.Check(t, n, func(c Chunk) ([]byte, error) { return c.AppendJSON(nil) })
}
