package tui

import (
	"encoding/json"
	"fmt"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/todo"
)

// maxTodoLines bounds the pinned todo list: its header and items; the rest
// are counted on one more line.
const maxTodoLines = 8

// pinnedTodo is the model's latest todo list (internal/todo) of the
// session it was sent in, pinned above the prompt until the model sends
// another one or the session changes (/new).
type pinnedTodo struct {
	session string
	list    todo.List
}

// todoResult takes the list of a todo call that succeeded: the tool
// accepted exactly what todo.Parse accepts, so the screen shows what the
// session holds.
func (m *Model) todoResult(c *call, r session.ToolResult) {
	if c.name != todo.Name || r.IsError {
		return
	}
	l, err := todo.Parse(json.RawMessage(c.args))
	if err != nil {
		return
	}
	m.todo = pinnedTodo{session: m.root, list: l}
}

// todoView is the pinned list: a header with the tally, then one escaped
// line per item from just before the first unfinished one (the last ones
// when all are done), at most maxTodoLines in all with the hidden ones
// counted.
func (m *Model) todoView() []string {
	l := m.todo.list
	if m.todo.session != m.root || len(l) == 0 {
		return nil
	}
	_, _, done := l.Counts()
	out := []string{m.st.bold.Render(fmt.Sprintf("todo %d/%d done", done, len(l)))}
	room := maxTodoLines - 1
	if len(l) > room {
		room-- // the "… N more" line
	}
	start := len(l) // all done: the last ones
	for i, it := range l {
		if it.State != todo.Done {
			start = max(i-1, 0)
			break
		}
	}
	start = max(min(start, len(l)-room), 0)
	end := min(start+room, len(l))
	for _, it := range l[start:end] {
		line := "  " + it.State.Mark() + " " + termsafe.EscapeLine(it.Text)
		switch it.State {
		case todo.Done:
			line = m.st.dim.Render(line)
		case todo.InProgress:
			line = m.st.running.Render(line)
		}
		out = append(out, fitLine(line, m.width))
	}
	if hidden := len(l) - (end - start); hidden > 0 {
		out = append(out, m.st.dim.Render(fmt.Sprintf("  … %d more", hidden)))
	}
	return out
}
