// Package todo provides the `todo` tool: a checklist the model keeps for
// itself across a long task (docs/tools.md). The model always sends the
// whole list, so the latest call is the list; the session log records it
// as it records every call, and the interactive terminal pins it above the
// prompt (internal/tui). The tool changes nothing outside the session, so
// it needs no approval and runs in every permission mode.
package todo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/tool"
)

// Name is the tool's name as the model sees it.
const Name = "todo"

// Bounds of one list: the model's list is shown on a terminal and goes
// back into the context, so neither may grow without end.
const (
	MaxItems    = 50
	MaxItemText = 500
)

// State is where one item stands.
type State string

const (
	Pending    State = "pending"
	InProgress State = "in_progress"
	Done       State = "done"
)

func (s State) valid() bool { return s == Pending || s == InProgress || s == Done }

// Item is one line of the list.
type Item struct {
	Text  string `json:"text"`
	State State  `json:"state"`
}

// List is the whole list, in the model's order.
type List []Item

type args struct {
	Items *List `json:"items"`
}

// Parse reads a todo call's arguments: the one rule for what a list is,
// shared by the tool and the terminal that pins it.
func Parse(raw json.RawMessage) (List, error) {
	var a args
	s := strings.TrimSpace(string(raw))
	if s == "" {
		s = "{}"
	}
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		return nil, fmt.Errorf("invalid arguments: %v", err)
	}
	if a.Items == nil {
		return nil, fmt.Errorf("missing required parameter %q", "items")
	}
	l := *a.Items
	if len(l) > MaxItems {
		return nil, fmt.Errorf("the list has %d items; at most %d are kept", len(l), MaxItems)
	}
	for i, it := range l {
		switch {
		case strings.TrimSpace(it.Text) == "":
			return nil, fmt.Errorf("item %d has no text", i+1)
		case len(it.Text) > MaxItemText:
			return nil, fmt.Errorf("item %d is %d bytes; at most %d", i+1, len(it.Text), MaxItemText)
		case !utf8.ValidString(it.Text):
			return nil, fmt.Errorf("item %d is not valid UTF-8", i+1)
		case !it.State.valid():
			return nil, fmt.Errorf("item %d has state %q (want pending, in_progress or done)", i+1, it.State)
		}
	}
	return l, nil
}

// Counts returns how many items are in each state.
func (l List) Counts() (pending, inProgress, done int) {
	for _, it := range l {
		switch it.State {
		case Pending:
			pending++
		case InProgress:
			inProgress++
		case Done:
			done++
		}
	}
	return
}

// Mark is the one-character sign of a state on a terminal.
func (s State) Mark() string {
	switch s {
	case InProgress:
		return "◐"
	case Done:
		return "✓"
	}
	return "○"
}

// Tool is a session's todo tool; it keeps the session's latest list.
type Tool struct {
	mu   sync.Mutex
	list List
}

// New returns a todo tool with an empty list, one per session.
func New() *Tool { return &Tool{} }

// List returns a copy of the latest list the model sent.
func (t *Tool) List() List {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append(List(nil), t.list...)
}

// Spec is what the model is shown.
func (*Tool) Spec() llm.ToolSpec {
	return llm.ToolSpec{
		Name: Name,
		Description: "Keep a checklist for a task of several steps. Send the whole list every time (it replaces the last one): " +
			"each item has text and a state, pending, in_progress or done. Keep one item in_progress while you work on it and mark it done when finished. " +
			fmt.Sprintf("At most %d items of %d bytes each. The user sees the list above the prompt.", MaxItems, MaxItemText),
		Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "items": {
      "type": "array",
      "maxItems": 50,
      "items": {
        "type": "object",
        "properties": {
          "text": {"type": "string", "description": "What the step is."},
          "state": {"type": "string", "enum": ["pending", "in_progress", "done"]}
        },
        "required": ["text", "state"],
        "additionalProperties": false
      }
    }
  },
  "required": ["items"],
  "additionalProperties": false
}`),
	}
}

// Needs is read-only: the list lives in the session, not the workspace.
func (*Tool) Needs() tool.Permission { return tool.ReadOnly }

// Run replaces the list and answers with a short tally.
func (t *Tool) Run(_ context.Context, _ *tool.Env, raw json.RawMessage) tool.Result {
	l, err := Parse(raw)
	if err != nil {
		return tool.Errorf("%v", err)
	}
	t.mu.Lock()
	t.list = l
	t.mu.Unlock()
	p, ip, d := l.Counts()
	return tool.Result{Content: fmt.Sprintf("todo list updated: %d items (%d pending, %d in progress, %d done)", len(l), p, ip, d)}
}
