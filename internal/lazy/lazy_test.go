package lazy

import (
	"sync"
	"sync/atomic"
	"testing"
)

var built atomic.Int32

// pkgValue is declared as reins's packages declare theirs.
var pkgValue = Value[map[string]int]{New: func() map[string]int {
	built.Add(1)
	return map[string]int{"x": 1}
}}

// TestValueBuildsOnce: nothing is built before the first Get; concurrent
// first Gets build once and all see the same value.
func TestValueBuildsOnce(t *testing.T) {
	if n := built.Load(); n != 0 {
		t.Fatalf("built %d times before any Get", n)
	}
	var wg sync.WaitGroup
	got := make([]map[string]int, 16)
	for i := range got {
		wg.Go(func() { got[i] = pkgValue.Get() })
	}
	wg.Wait()
	if n := built.Load(); n != 1 {
		t.Fatalf("built %d times", n)
	}
	for _, m := range got {
		if m["x"] != 1 {
			t.Fatalf("a Get saw %v", m)
		}
		m["y"] = 2 // the same map everywhere
	}
	if pkgValue.Get()["y"] != 2 {
		t.Fatal("Gets returned different values")
	}
}
