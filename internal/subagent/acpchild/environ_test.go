package acpchild

import (
	"slices"
	"testing"
)

// The acp provider makes a child's environment as the pi and reins
// providers do (issue 14 item 4): the agent's variables replace the
// inherited ones; each key occurs once. It used to append them after the
// inherited ones, so the parent's value was still there to be read first.
func TestEnvironKeysOnce(t *testing.T) {
	p := New(Options{Environ: func() []string { return []string{"A=parent", "B=2"} }}).(*provider)
	got := p.environ(map[string]string{"A": "agent"})
	if want := []string{"B=2", "A=agent"}; !slices.Equal(got, want) {
		t.Errorf("environ = %q, want %q", got, want)
	}
}
