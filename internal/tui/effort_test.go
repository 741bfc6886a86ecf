package tui

import (
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/llm"
)

// TestStatusShowsEffort: the status line names the effort next to the
// model when one is set, and says nothing of it otherwise.
func TestStatusShowsEffort(t *testing.T) {
	s := newScreen(t, "", func(o *Options) {
		o.Harness.Effort = llm.EffortHigh
		m, err := o.Harness.ResolveModel("mock/echo", "")
		if err != nil {
			t.Fatal(err)
		}
		o.Session.Model = m
	})
	if v := s.view(); !strings.Contains(v, "mock/echo · effort high") {
		t.Errorf("status without the effort:\n%s", v)
	}
	if v := newScreen(t, "", nil).view(); strings.Contains(v, "effort") {
		t.Errorf("effort shown with none set:\n%s", v)
	}
}
