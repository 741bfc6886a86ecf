package todopin

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"

	"github.com/reinsdev/reins/internal/todo"
)

func args(t *testing.T, n, done int) string {
	t.Helper()
	var l todo.List
	for i := range n {
		st := todo.Pending
		switch {
		case i < done:
			st = todo.Done
		case i == done:
			st = todo.InProgress
		}
		l = append(l, todo.Item{Text: fmt.Sprintf("item %d", i+1), State: st})
	}
	b, err := json.Marshal(map[string]any{"items": l})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPin: a todo call that succeeded is pinned for its session only; a
// long list shows a window from one before the first unfinished item,
// the rest counted, within maxTodoLines; a failed or other call changes
// nothing.
func TestPin(t *testing.T) {
	p := lipgloss.NewStyle()
	st := Styles{Bold: p, Dim: p, Running: p}
	var pin Pin
	if v := pin.View("s1", 80, st); v != nil {
		t.Fatalf("an empty pin draws %q", v)
	}
	pin.Take("s1", todo.Name, args(t, 20, 10), false)
	v := strings.Join(pin.View("s1", 80, st), "\n")
	if !strings.Contains(v, "todo 10/20 done") || !strings.Contains(v, "✓ item 10") || !strings.Contains(v, "◐ item 11") ||
		strings.Contains(v, "item 9\n") || !strings.Contains(v, "… 14 more") || strings.Count(v, "\n")+1 > maxTodoLines {
		t.Errorf("window of a long list:\n%s", v)
	}
	if pin.View("s2", 80, st) != nil {
		t.Error("another session shows the list")
	}
	pin.Take("s1", todo.Name, args(t, 1, 0), true)
	pin.Take("s1", "bash", args(t, 1, 0), false)
	if v := strings.Join(pin.View("s1", 80, st), "\n"); !strings.Contains(v, "todo 10/20 done") {
		t.Errorf("a failed or other call changed the pin:\n%s", v)
	}
}
