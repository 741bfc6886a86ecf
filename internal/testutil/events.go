package testutil

import (
	"testing"

	"github.com/reinsdev/reins/internal/session"
)

// Decoded returns the data of every event of type typ, decoded into T, in
// log order. A payload that does not decode fails the test: a test that
// picks events by type has named the shape it expects.
func Decoded[T any](tb testing.TB, events []session.Event, typ string) []T {
	tb.Helper()
	var out []T
	for _, e := range events {
		if e.Type != typ {
			continue
		}
		d, ok := e.Payload.(T)
		if !ok { // a view of the data other than its payload
			if err := e.Decode(&d); err != nil {
				tb.Fatalf("event %d (%s): %v", e.Seq, typ, err)
			}
		}
		out = append(out, d)
	}
	return out
}
