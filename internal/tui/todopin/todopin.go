// Package todopin is the todo list pinned above the interactive
// screen's prompt: the model's latest list (internal/todo) of the session
// it was sent in, kept until the model sends another one or the session
// changes (/new), and drawn in a few escaped lines.
package todopin

import (
	"encoding/json"
	"fmt"

	"charm.land/lipgloss/v2"

	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/todo"
	"github.com/reinsdev/reins/internal/tui/termtext"
)

// Styles are the colours of the pinned list.
type Styles struct{ Bold, Dim, Running lipgloss.Style }

// maxTodoLines bounds the pinned todo list: its header and items; the rest
// are counted on one more line.
const maxTodoLines = 8

// Pin is the model's latest todo list of the session it was sent in.
type Pin struct {
	session string
	list    todo.List
}

// Take pins the list of a call of session that succeeded, when it is a
// todo call: the tool accepted exactly what todo.Parse accepts, so the
// screen shows what the session holds.
func (p *Pin) Take(session, name, args string, isError bool) {
	if name != todo.Name || isError {
		return
	}
	l, err := todo.Parse(json.RawMessage(args))
	if err != nil {
		return
	}
	*p = Pin{session: session, list: l}
}

// View is the list pinned in session, width cells wide: a header with the tally, then one escaped
// line per item from just before the first unfinished one (the last ones
// when all are done), at most maxTodoLines in all with the hidden ones
// counted.
func (p Pin) View(session string, width int, st Styles) []string {
	l := p.list
	if p.session != session || len(l) == 0 {
		return nil
	}
	_, _, done := l.Counts()
	out := []string{st.Bold.Render(fmt.Sprintf("todo %d/%d done", done, len(l)))}
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
			line = st.Dim.Render(line)
		case todo.InProgress:
			line = st.Running.Render(line)
		}
		out = append(out, termtext.Fit(line, width))
	}
	if hidden := len(l) - (end - start); hidden > 0 {
		out = append(out, st.Dim.Render(fmt.Sprintf("  … %d more", hidden)))
	}
	return out
}
