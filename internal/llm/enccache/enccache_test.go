package enccache

import (
	"fmt"
	"sync"
	"testing"

	"github.com/reinsdev/reins/internal/llm"
)

func msg(s string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: s}}}
}

func TestGetEncodesOnce(t *testing.T) {
	var c Cache[string]
	calls := 0
	enc := func(m llm.Message) string { calls++; return m.Text() }
	a, b := msg("a"), msg("b")
	for range 3 {
		r := c.Begin()
		if r.Get(a, enc) != "a" || r.Get(b, enc) != "b" {
			t.Fatal("wrong value")
		}
		r.Done()
	}
	if calls != 2 {
		t.Fatalf("%d encodings for 2 messages over 3 requests", calls)
	}
	// The same first block with more content is another message.
	same := llm.Message{Role: a.Role, Content: a.Content}
	same.Content = append(same.Content[:1], llm.Block{Type: llm.BlockText, Text: "!"})
	r := c.Begin()
	if got := r.Get(same, enc); got != "a!" {
		t.Fatalf("a message grown in place read as %q", got)
	}
	if got := r.Get(llm.Message{Role: llm.RoleAssistant, Content: same.Content}, enc); got != "a!" || calls != 4 {
		t.Fatalf("another role: %q after %d encodings", got, calls)
	}
	r.Done()
	// Empty content is never cached.
	r = c.Begin()
	r.Get(llm.Message{Role: llm.RoleUser}, enc)
	r.Get(llm.Message{Role: llm.RoleUser}, enc)
	r.Done()
	if calls != 6 {
		t.Fatalf("empty messages: %d encodings", calls)
	}
}

// TestBounded: a long session whose history is replaced (compaction)
// keeps only about what its requests use.
func TestBounded(t *testing.T) {
	var c Cache[int]
	enc := func(llm.Message) int { return 0 }
	for step := range 5000 {
		// A window of the 50 latest messages, as a compacted history.
		r := c.Begin()
		for i := max(0, step-50); i <= step; i++ {
			r.Get(msg(fmt.Sprint(i)), enc) // fresh messages: new addresses
		}
		r.Done()
		if c.Len() > 4*51+4*slack {
			t.Fatalf("step %d: %d entries", step, c.Len())
		}
	}
}

func TestConcurrent(t *testing.T) {
	var c Cache[string]
	shared := []llm.Message{msg("x"), msg("y")}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				r := c.Begin()
				for _, m := range shared {
					if r.Get(m, func(m llm.Message) string { return m.Text() }) != m.Text() {
						t.Error("wrong value")
					}
				}
				r.Get(msg("own"), func(m llm.Message) string { return m.Text() })
				r.Done()
			}
		})
	}
	wg.Wait()
}

// TestToolsCache: an equal list is served from the cache; any change to a
// name, a description or a schema — even made in place to the slice the
// cache was given — encodes again.
func TestToolsCache(t *testing.T) {
	var c Tools
	calls := 0
	enc := func(specs []llm.ToolSpec) ([]byte, error) {
		calls++
		return []byte(fmt.Sprintf("%d:%s", calls, specs[0].Parameters)), nil
	}
	specs := []llm.ToolSpec{{Name: "read", Description: "Reads.", Parameters: []byte(`{"type":"object"}`)}}
	get := func() string {
		t.Helper()
		b, err := c.Get(specs, enc)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := get(); got != `1:{"type":"object"}` {
		t.Fatalf("first = %q", got)
	}
	if got := get(); got != `1:{"type":"object"}` || calls != 1 {
		t.Fatalf("same list: %q after %d encodings, want the cached one", got, calls)
	}
	specs[0].Parameters[2] = 'T' // changed in place
	if got := get(); got != `2:{"Type":"object"}` {
		t.Fatalf("schema changed in place: %q", got)
	}
	specs = append(specs, llm.ToolSpec{Name: "ls"})
	if get(); calls != 3 {
		t.Fatalf("a tool added: %d encodings, want 3", calls)
	}
	specs[1].Description = "Lists."
	if get(); calls != 4 {
		t.Fatalf("a description changed: %d encodings, want 4", calls)
	}
}
